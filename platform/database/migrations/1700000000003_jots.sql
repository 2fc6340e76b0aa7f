-- Up Migration

-- array_to_string is only STABLE (it could call any type's output function); on text[] it is
-- immutable, which a generated column needs.
CREATE FUNCTION jots_tags_text(tags text[]) RETURNS text
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT array_to_string(tags, ' ') $$;

-- The jots built-in: each user's private notes. Every query names tenant and user.
CREATE TABLE jots (
  id          text PRIMARY KEY,
  tenant_id   text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  title       text NOT NULL CHECK (char_length(title) BETWEEN 1 AND 200),
  body        text NOT NULL CHECK (octet_length(body) <= 100000),
  tags        text[] NOT NULL DEFAULT '{}',
  -- Full-text search, English stemming: the title weighs most, then the tags, then the body.
  search      tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('english'::regconfig, title), 'A') ||
                setweight(to_tsvector('english'::regconfig, jots_tags_text(tags)), 'B') ||
                setweight(to_tsvector('english'::regconfig, body), 'C')
              ) STORED,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jots_owner_idx ON jots (tenant_id, user_id, created_at DESC, id DESC);
CREATE INDEX jots_search_idx ON jots USING GIN (search);

-- Down Migration
DROP TABLE jots;
DROP FUNCTION jots_tags_text(text[]);
