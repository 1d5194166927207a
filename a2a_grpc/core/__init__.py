"""Transport-free protocol rules: states, errors, lifecycle, validation, listing.

Imports only `generated`, the protobuf runtime and the standard library.
"""
