"""The loopback CIMD fetcher of the test seam (tests/oauth/cimd_seam.py), imported by DOT by name once
Django is set up."""

import ssl
from typing import Any
from urllib.parse import urlsplit

import urllib3
from oauth2_provider import cimd

from oauth.cimd import KenfoldCimdFetcher, check_client_id_url, normalize_client_metadata
from tests.oauth.cimd_seam import SEAM


class LoopbackCimdFetcher(KenfoldCimdFetcher):
    """Kenfold's fetcher with one rule lifted: it connects to the seam's address instead of the public
    addresses the name resolves to. TLS is verified against the test CA, for the document's host name."""

    def fetch(self, client_id: str) -> tuple[dict[str, Any], int]:
        check_client_id_url(client_id)
        parsed = cimd._validate_client_id_url(client_id)
        host, port = SEAM["address"]
        pool = urllib3.HTTPSConnectionPool(
            host=host,
            port=port,
            timeout=urllib3.Timeout(total=5),
            retries=False,
            maxsize=1,
            ssl_context=ssl.create_default_context(cafile=SEAM["ca_file"]),
            server_hostname=parsed.hostname,
        )
        try:
            response = pool.urlopen(
                "GET",
                urlsplit(client_id).path,
                headers={"Host": parsed.netloc, "Accept": "application/json"},
                redirect=False,
                preload_content=False,
            )
            try:
                document, max_age = self._read_document(response)
            finally:
                response.release_conn()
        except urllib3.exceptions.HTTPError as exc:
            raise cimd.CIMDError(f"could not fetch client_id document: {exc}") from exc
        finally:
            pool.close()
        return normalize_client_metadata(document), max_age
