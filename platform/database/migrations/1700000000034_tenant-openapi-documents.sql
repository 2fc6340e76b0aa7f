-- Up Migration

-- The OpenAPI documents of tenants' own OpenAPI integrations (a tenant_upstream_servers row whose
-- entry has "kind": "openapi"), fetched once when the integration is added. The entry names its
-- document by the sha256 of this text; a server reads the text only when an entry it has not built
-- yet names it (it can be megabytes), never on each re-read of the tenant's rows.
CREATE TABLE tenant_openapi_documents (
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  sha256      text NOT NULL,
  text        text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, sha256)
);

-- Down Migration
DROP TABLE tenant_openapi_documents;
