"""The OpenAPI listing of the ramp's discovery and customer operations: each operation's id,
its 200 model unwrapped (RA1: not inside ``data``), every error status it can answer with the
error envelope, no API key (RA4), and a request body whose schema has properties."""

from __future__ import annotations

import pytest

from tests.unit.ramp_http.edge import Edge, ok

WALLET_STATUSES = {"400", "401", "403", "404", "413", "429", "500", "502"}


@pytest.mark.parametrize(
    ("path", "method", "operation_id", "model", "errors"),
    [
        ("/v2/ramp/providers", "get", "rampProviders", "ProvidersList", {"400", "429", "500"}),
        (
            "/v2/ramp/banks",
            "get",
            "rampBanks",
            "BankList",
            {"400", "403", "404", "422", "429", "500", "502"},
        ),
        (
            "/v2/ramp/banks/resolve",
            "post",
            "rampResolveAccount",
            "ResolvedAccount",
            {"400", "403", "404", "413", "422", "429", "500", "502"},
        ),
        (
            "/v2/ramp/customers",
            "post",
            "rampRegisterCustomer",
            "CustomerResult",
            WALLET_STATUSES | {"422"},
        ),
        (
            "/v2/ramp/customers/details",
            "post",
            "rampCustomerDetails",
            "DetailsResult",
            WALLET_STATUSES,
        ),
        (
            "/v2/ramp/customers/kyc",
            "post",
            "rampSubmitKyc",
            "KycSubmitted",
            WALLET_STATUSES | {"422"},
        ),
        (
            "/v2/ramp/customers/kyc/status",
            "post",
            "rampKycStatus",
            "KycResult",
            WALLET_STATUSES | {"422"},
        ),
        (
            "/v2/ramp/customers/kyc/link",
            "post",
            "rampKycLink",
            "KycLink",
            WALLET_STATUSES | {"422"},
        ),
    ],
)
async def test_openapi_lists_the_operation_with_its_errors(
    edge: Edge, path: str, method: str, operation_id: str, model: str, errors: set[str]
) -> None:
    document = await ok(await edge.client.get("/v2/openapi.json"))
    operation = document["paths"][path][method]
    assert operation["operationId"] == operation_id
    assert set(operation["responses"]) == {"200"} | errors
    success = operation["responses"]["200"]["content"]["application/json"]["schema"]
    assert success == {"$ref": f"#/components/schemas/{model}"}  # RA1: not wrapped in data
    for status in errors:
        content = operation["responses"][status]["content"]["application/json"]
        assert content["schema"] == {"$ref": "#/components/schemas/ErrorEnvelope"}
    assert "security" not in operation  # no API key on the ramp (RA4)
    if method == "post":
        body = operation["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        assert document["components"]["schemas"][body.rpartition("/")[2]]["properties"]
