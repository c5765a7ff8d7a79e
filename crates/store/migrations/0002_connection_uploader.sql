-- drivelab results database, schema version 2: how the drive was connected and who
-- uploaded the run. Columns are only added (existing runs keep every value and read
-- NULL here: "not recorded").

ALTER TABLE runs ADD COLUMN device_connection TEXT;
ALTER TABLE runs ADD COLUMN uploaded_by TEXT;
