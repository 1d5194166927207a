"""`make bench`: measurements, never pass/fail tests. Figures are ratios within one run."""
