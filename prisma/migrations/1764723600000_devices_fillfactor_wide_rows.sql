-- Up Migration

-- A device row is ~1.2 KB (its stored conditions ~1 KB), so a page holds six. Every push
-- re-stamps every device it lists, and that update is heap-only (HOT: no new index entries)
-- only when the new version fits in the same page. At fillfactor 70 a page starts with four
-- rows and room for two more versions, so half of each stamp went to other pages with a new
-- entry in every index; at 50 it starts with three and room for three. Existing pages get the
-- space as they are rewritten.
ALTER TABLE devices SET (fillfactor = 50);
