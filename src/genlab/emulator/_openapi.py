"""The emulator's OpenAPI document: request bodies come straight from the catalog and answers
from the wire format, so field descriptions written once become the API's documentation."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi
from pydantic import TypeAdapter

from genlab._wire import wire_schemas
from genlab.catalog import CATALOG

_REF = "#/components/schemas/{model}"


def _errors(*statuses: int) -> dict[str, Any]:
    content = {"application/json": {"schema": {"$ref": _REF.format(model="ErrorEnvelope")}}}
    out: dict[str, Any] = {
        str(s): {"description": "Error envelope", "content": content} for s in statuses
    }
    out["503"] = {"description": "Overloaded (an envelope, or no body from a proxy)"}
    return out


def install_openapi(app: FastAPI) -> None:
    """Replace FastAPI's generated document with one whose bodies are the catalog's classes."""

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        doc = get_openapi(
            title=app.title, version=app.version, description=app.description, routes=app.routes
        )
        schemas = doc.setdefault("components", {}).setdefault("schemas", {})
        schemas |= wire_schemas()
        for kind in ("video", "image"):
            classes = tuple(c for c in CATALOG.values() if c.KIND == kind)
            union: Any = classes[0]
            for cls in classes[1:]:
                union = union | cls
            schema = TypeAdapter(union).json_schema(ref_template=_REF)
            schemas |= schema.pop("$defs", {})
            body = {"required": True, "content": {"application/json": {"schema": schema}}}
            post = doc["paths"][f"/v1/{kind}s/generate"]["post"]
            post["requestBody"] = body
            post["responses"] = {
                "200": {
                    "description": "The task",
                    "content": {
                        "application/json": {"schema": {"$ref": _REF.format(model="Task")}}
                    },
                },
                **_errors(400, 401, 413, 429),
            }
            query = doc["paths"][f"/v1/{kind}s/tasks/{{task_id}}"]["get"]
            record = "VideoTaskRecord" if kind == "video" else "ImageTaskRecord"
            query["responses"] = {
                "200": {
                    "description": "The task record",
                    "content": {
                        "application/json": {"schema": {"$ref": _REF.format(model=record)}}
                    },
                },
                **_errors(401, 404, 429),
            }
        for path in doc["paths"].values():
            for operation in path.values():
                if isinstance(operation, dict) and not operation.get("tags") == ["emulator"]:
                    operation["security"] = [{"bearer": []}]
        doc["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
        app.openapi_schema = doc
        return doc

    app.openapi = openapi  # type: ignore[method-assign]
