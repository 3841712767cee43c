-- What the interim version (hand-written upgrades, runs named by agent, events numbered) added to 3-before-migrations.
ALTER TABLE runs ADD COLUMN agent VARCHAR(80) NOT NULL DEFAULT '';
ALTER TABLE events ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
