"""Signed reports: Ed25519 keys, a per-vendor keyring, DSSE envelopes over in-toto statements.

``kit.signing.sign.sign_output_dir`` signs a run's report files; ``kit.verification`` checks
what was signed. The package imports none of its modules: a reader of ``kit.signing.keys``
(a vendor profile's id syntax) does not load the signer and the report formats it reads.
"""
