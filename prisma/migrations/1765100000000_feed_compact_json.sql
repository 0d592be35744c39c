-- Up Migration

-- The feed now sends each event's `data` as it is stored (the page's JSON text is built by
-- PostgreSQL, apps/hub/src/modules/feed/repo.ts). Events written since 1764900000000 hold the
-- text the hub wrote, JSON.stringify's compact form; events converted from jsonb by that
-- migration hold jsonb's text, with a space after each ':' and ','. Those are rewritten here in
-- the compact form, keys in their order and strings escaped as before, so every page keeps the
-- bytes it had when the hub parsed and re-serialised each event. (Only such events can hold
-- '": ' or '", ' outside a string; compacting one that holds it inside a string changes nothing.)
CREATE FUNCTION fm_compact_json(v json) RETURNS json LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
  RETURN CASE json_typeof(v)
    WHEN 'object' THEN (
      SELECT coalesce('{' || string_agg(to_json(k)::text || ':' || fm_compact_json(x)::text, ',' ORDER BY n) || '}', '{}')
        FROM json_each(v) WITH ORDINALITY AS m(k, x, n))::json
    WHEN 'array' THEN (
      SELECT coalesce('[' || string_agg(fm_compact_json(x)::text, ',' ORDER BY n) || ']', '[]')
        FROM json_array_elements(v) WITH ORDINALITY AS m(x, n))::json
    -- Strings, numbers, booleans and null: their own text, which has no space to take out.
    ELSE v
  END;
END $$;

UPDATE inventory_events SET data = fm_compact_json(data) WHERE data::text LIKE '%": %' OR data::text LIKE '%, %';

DROP FUNCTION fm_compact_json(json);

-- Down Migration

-- Nothing to undo: the compact text is the same JSON.
SELECT 1;
