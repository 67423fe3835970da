"""The OpenAPI schema's examples: real requests and responses of the API, kept as data in
openapi_examples.json, which tests/contract/examples.py captures (and a test captures again to check that
they still are)."""

import json
from pathlib import Path
from typing import Any

EXAMPLES_FILE = Path(__file__).resolve().with_name("openapi_examples.json")

EXAMPLES: dict[str, Any] = json.loads(EXAMPLES_FILE.read_text(encoding="utf-8"))
