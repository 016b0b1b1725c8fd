"""The one test seam of the CIMD fetcher: a client's metadata document served over TLS from 127.0.0.1.

Kenfold's fetcher refuses every non-public address, so a document on this machine can only be reached
through this module, which a test names as the gunicorn app (`application_for(<config file>)`). Nothing in
kenfold/ or oauth/ refers to it and no environment variable selects it. Every other rule still applies: the
URL checks, TLS with certificate verification against the test CA, no redirects, the document rules and
Kenfold's normalisation.
"""

import json
import os
from typing import Any

SEAM_FETCHER = "tests.oauth.cimd_fetcher.LoopbackCimdFetcher"
# Where the document server listens and the CA that signed its certificate; set by application_for.
SEAM: dict[str, Any] = {}


def application_for(config_path: str) -> Any:
    """gunicorn app factory: Kenfold's ASGI app with the loopback fetcher configured from a JSON file
    ({"address": [host, port], "ca_file": path})."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kenfold.settings")
    from django.conf import settings

    with open(config_path) as handle:
        config = json.load(handle)
    settings.OAUTH2_PROVIDER["CIMD_METADATA_FETCHER"] = SEAM_FETCHER
    SEAM["address"] = (config["address"][0], int(config["address"][1]))
    SEAM["ca_file"] = config["ca_file"]
    from edge.asgi import application

    return application
