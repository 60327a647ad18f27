"""Validate an archive's RO-Crate with the community's validator, offline.

    python tests/crate_validation.py DIR [--profile provenance-run-crate]

DIR is an extracted archive (the folder holding ``ro-crate-metadata.json``). The validator
(``roc-validator``, ``rocrate_validator``) fetches the RO-Crate JSON-LD context
(https://w3id.org/ro/crate/1.1/context) from the web; here its requests session answers that URL
with the copy the ``rocrate`` package ships (``rocrate/data/ro-crate.jsonld``: the RO-Crate 1.3
context, whose terms include every 1.1 term with the same IRIs) and refuses every other URL, so
that it runs without a network and never reaches one. Prints the failed checks by severity and
exits 1 when a REQUIRED one fails.
"""

import argparse
import json
import os
import sys
from collections import Counter
from importlib import resources

import requests
from requests.adapters import BaseAdapter

CONTEXTS = ("https://w3id.org/ro/crate/1.1/context",)  # what the crate's @context names
SEVERITIES = ("REQUIRED", "RECOMMENDED", "OPTIONAL")
WARM_UP = "ROCRATE_VALIDATOR_AUTO_WARM"


class LocalContexts(BaseAdapter):
    """A requests adapter answering the RO-Crate context URLs from rocrate's copy; any other URL
    fails at once (no network is ever reached)."""

    def __init__(self):
        super().__init__()
        self.context = resources.files("rocrate").joinpath("data/ro-crate.jsonld").read_bytes()
        self.refused = []

    def send(self, request, **kwargs):
        url = request.url.split("#")[0]
        if url not in CONTEXTS:
            self.refused.append(url)
            raise requests.ConnectionError(f"offline validation: {url} is not served")
        response = requests.Response()
        response.status_code, response.url, response.request = 200, request.url, request
        response.headers["Content-Type"] = "application/ld+json"
        response._content = self.context
        return response

    def close(self):
        pass


def validate(top, profile="provenance-run-crate"):
    """(result, adapter): the validator's result on the crate in ``top`` at every severity from
    RECOMMENDED up (OPTIONAL checks too when asked), and the adapter that served the context."""
    from rocrate_validator import services
    from rocrate_validator.models import ValidationSettings
    from rocrate_validator.utils.http import HttpRequester

    before = os.environ.get(WARM_UP)
    os.environ[WARM_UP] = "0"  # no warm-up of the profiles' URLs (no cache either: nothing to warm)
    try:
        settings = ValidationSettings(rocrate_uri=str(top), profile_identifier=profile,
                                      requirement_severity="RECOMMENDED", no_cache=True)
    finally:
        os.environ.pop(WARM_UP) if before is None else os.environ.__setitem__(WARM_UP, before)
    adapter = LocalContexts()
    session = HttpRequester().session  # rebuilt by the settings above: mount after them
    for prefix in ("https://", "http://"):
        session.mount(prefix, adapter)
    return services.validate(settings), adapter


def failures(result):
    """{severity name: [(check name, message, entity)]} of the failed checks."""
    out = {}
    for issue in result.get_issues():
        out.setdefault(issue.severity.name, []).append(
            (issue.check.name, " ".join(str(issue.message).split()), issue.violatingEntity))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir", help="an extracted archive (its folder holding ro-crate-metadata.json)")
    parser.add_argument("--profile", default="provenance-run-crate")
    args = parser.parse_args(argv)
    result, adapter = validate(args.dir, args.profile)
    found = failures(result)
    for severity in SEVERITIES:
        checks = Counter((name, message) for name, message, _ in found.get(severity, []))
        print(f"{severity}: {len(checks)} failed check(s)")
        for (name, message), count in sorted(checks.items()):
            print(f"  {name}: {message} ({count} entit{'y' if count == 1 else 'ies'})")
    if adapter.refused:
        print(f"not served (offline): {json.dumps(sorted(set(adapter.refused)))}")
    return 1 if found.get("REQUIRED") else 0


if __name__ == "__main__":
    sys.exit(main())
