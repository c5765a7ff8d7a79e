-- drivelab results database, schema version 3 (SQLite): indexes for the server's pages.
-- Only indexes are added; no row changes.
--
-- The runs page sorts on start time by default (newest first): this index is read
-- backwards instead of sorting the table. A drive page finds its runs by model and serial.
-- SQLite sorts the other columns of 10 000 runs in a few milliseconds without one.

CREATE INDEX runs_page_started ON runs (started_at, run_id);
CREATE INDEX runs_drive ON runs (device_model, device_serial);
