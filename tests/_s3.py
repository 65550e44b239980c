"""An S3-compatible server for the object-storage tests: moto in server mode, on loopback.

The server runs once per session on a free port. ``s3`` points one test at it: it creates a
fresh bucket and sets the AWS environment (fake credentials, the endpoint) only for that test,
so no other test ever talks to S3 or sees these variables.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

S3_KEY_ID = "AKIAGENLABTEST7Q2X"
# Distinctive, so a search for it in errors and logs cannot match by accident.
S3_SECRET = "genlab-s3-secret-9c41e0d7"
_buckets = itertools.count(1)


@dataclass(frozen=True)
class S3:
    """The loopback S3 server and one empty bucket made for the current test."""

    endpoint: str
    bucket: str

    def url(self, prefix: str = "") -> str:
        """``s3://<bucket>/<prefix>``."""
        return f"s3://{self.bucket}/{prefix}"

    def client(self) -> Any:
        """A boto3 S3 client for the server, to check what genlab stored without genlab."""
        import boto3

        return boto3.client(
            "s3", endpoint_url=self.endpoint, region_name="us-east-1",
            aws_access_key_id=S3_KEY_ID, aws_secret_access_key=S3_SECRET,
        )


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """moto's S3 server on a free loopback port, stopped at the end of the session."""
    from moto.server import ThreadedMotoServer  # imported here: most sessions never need it

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield f"http://{host}:{port}"
    finally:
        server.stop()


@pytest.fixture
def s3(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> S3:
    """A new bucket on the loopback server; the AWS environment points at it for this test."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": S3_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": S3_SECRET,
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ENDPOINT_URL_S3": s3_endpoint,  # botocore's own setting, read by s3fs
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "GENLAB_MEDIA"):
        monkeypatch.delenv(name, raising=False)
    store = S3(s3_endpoint, f"genlab-media-{next(_buckets)}")
    store.client().create_bucket(Bucket=store.bucket)
    return store
