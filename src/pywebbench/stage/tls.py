"""A run's TLS material (h1-tls, h2-tls): a self-signed certificate for 127.0.0.1 and its key,
made once per run in the run's directory, private to its owner (directory 0700, key 0600).

The openssl command line makes them: `cryptography` is in the environment only as another
package's dependency, not one of pywebbench's. The key is P-256 in PKCS#8, the one form every
server here reads (Granian takes PKCS#8 only). h2load does not verify certificates.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from pywebbench.catalog.protocols import TlsFiles

HOST = "127.0.0.1"
DAYS = 7
"""Long enough for any run (and its --resume), short enough that a leaked copy soon expires."""


def tls_material(directory: Path) -> TlsFiles:
    """The certificate and key in `directory`, made on first use (RuntimeError if openssl cannot)."""
    certificate, key = directory / "cert.pem", directory / "key.pem"
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    directory.chmod(0o700)  # mkdir's mode is masked by the umask, and an existing directory keeps its own
    if certificate.exists() and key.exists():
        key.chmod(0o600)
        return TlsFiles(str(certificate), str(key))
    openssl = shutil.which("openssl")
    if openssl is None:
        raise RuntimeError("openssl is missing (it makes the run's certificate for --protocol h1-tls/h2-tls)")
    # Made under a private umask: the key is never readable by others, not even between calls.
    old = os.umask(0o077)
    try:
        done = subprocess.run(
            [openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", str(key), "-out", str(certificate), "-days", str(DAYS), "-subj", f"/CN={HOST}",
             "-addext", f"subjectAltName=IP:{HOST}"],
            capture_output=True, text=True, check=False)
    finally:
        os.umask(old)
    if done.returncode != 0:
        raise RuntimeError(f"openssl could not make the run's certificate: {done.stderr.strip()[-300:]}")
    key.chmod(0o600)
    certificate.chmod(0o600)
    return TlsFiles(str(certificate), str(key))
