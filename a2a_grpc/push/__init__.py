"""Push notifications: the SSRF policy, the durable sender, JWT signing and a
receiver-side verifier."""
