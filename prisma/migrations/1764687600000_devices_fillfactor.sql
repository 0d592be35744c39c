-- Up Migration

-- Every reflection push refreshes the source's observed-at of every device it lists (tens of
-- thousands of rows every 30 s). With free space left in each page PostgreSQL can make those
-- heap-only (HOT) updates: no new entry in any of the table's indexes, far less WAL and
-- vacuum work. Existing pages get the space as they are rewritten.
ALTER TABLE devices SET (fillfactor = 70);
