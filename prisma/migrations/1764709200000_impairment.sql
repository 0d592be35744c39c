-- Up Migration

-- Who cordoned a device: an operator (PATCH) or the impairment rule (health critical too long).
-- Impairment never releases nor overrides an operator's cordon, so it must tell them apart.
ALTER TABLE devices ADD COLUMN cordon_source varchar(20);
UPDATE devices SET cordon_source = 'operator' WHERE cordoned;
-- A cordoned row without a source reads as an operator's (the API says so): impairment only ever
-- releases what it marked itself.
ALTER TABLE devices ADD CONSTRAINT devices_cordon_source_check CHECK (cordon_source IN ('operator', 'impairment'));

-- Since when the health status has been what it is (the push that first observed it): the
-- impairment windows are measured from it. Earlier rows start from their last observation.
ALTER TABLE devices ADD COLUMN health_since timestamptz(3);
UPDATE devices SET health_since = health_observed_at WHERE health_status IS NOT NULL;

-- A site whose due impairment cordons were stopped by the per-site limit: the condition an
-- operator sees instead of a site cordoned wholesale by a monitoring outage.
ALTER TABLE sites ADD COLUMN impairment_held_since timestamptz(3);
ALTER TABLE sites ADD COLUMN impairment_hold_message text;

-- Down Migration

ALTER TABLE sites DROP COLUMN impairment_hold_message;
ALTER TABLE sites DROP COLUMN impairment_held_since;
ALTER TABLE devices DROP COLUMN health_since;
ALTER TABLE devices DROP CONSTRAINT devices_cordon_source_check;
ALTER TABLE devices DROP COLUMN cordon_source;
