"""Schemathesis over the OpenAPI schema of a real ``wh40k serve`` (127.0.0.1, the test database
of both editions): every operation with generated valid and invalid inputs (a fixed, seeded,
small budget), no server error (5xx), every status code documented and every response body
matching its declared schema, invalid inputs rejected with a 4xx."""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance, negative_data_rejection, response_schema_conformance, status_code_conformance,
)

from tests.editions_db import editions_db
from tests.service_server import served

#: What a response must satisfy. Not ``positive_data_acceptance``: the schema cannot say every
#: rule of the inputs (the inline profile syntax, a search text with a word of two letters), so a
#: request valid by the schema may still get a 422 that says why.
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance,
          negative_data_rejection]

#: Generated requests per operation and mode (derandomized: the same requests every run).
EXAMPLES = 10


@pytest.fixture(scope="module")
def base_url():
    with served(editions_db()) as base:
        yield base


@pytest.fixture(scope="module")
def api_schema(base_url):
    return schemathesis.openapi.from_url(f"{base_url}/openapi.json")


#: Every operation of the API (``tests/test_service.py`` checks that the schema has these alone).
OPERATIONS = [("GET", p) for p in ("/api/info", "/api/units", "/api/unit", "/api/weapons", "/api/rule",
                                    "/api/rule-diff", "/api/rule-changes", "/api/search", "/api/matchups")] + [
    ("POST", "/api/attack"), ("POST", "/api/list"), ("POST", "/api/matchup")]


def test_the_operations_are_the_schemas(api_schema):
    found = sorted((op.ok().method.upper(), op.ok().path) for op in api_schema.get_all_operations())
    assert found == sorted(OPERATIONS)


#: Each operation with valid inputs and, where it takes any (all but /api/info), invalid ones.
CASES = [(method, path, mode) for method, path in OPERATIONS
         for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)
         if not (path == "/api/info" and mode is GenerationMode.NEGATIVE)]


@pytest.mark.parametrize(("method", "path", "mode"), CASES)
def test_every_operation_answers_as_its_schema_says(api_schema, method, path, mode):
    operation = api_schema[path][method]

    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    def answers_as_declared(case):
        case.call_and_validate(checks=CHECKS)

    answers_as_declared()
