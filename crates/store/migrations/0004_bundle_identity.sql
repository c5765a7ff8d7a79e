-- drivelab results database, schema version 4: the stored run.json's size and SHA-256,
-- so that a server can key a rendered page by the content it shows and bound the memory
-- of rendering before it reads the document. Columns are only added; an existing run's
-- size is filled in from its stored text (its hash stays NULL: unknown, never wrong).

ALTER TABLE runs ADD COLUMN bundle_bytes BIGINT;
ALTER TABLE runs ADD COLUMN bundle_sha256 TEXT;
UPDATE runs SET bundle_bytes = LENGTH(bundle_json) WHERE bundle_json IS NOT NULL;
