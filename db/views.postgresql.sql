-- The views of db/views.sql in PostgreSQL's SQL (built by `wh40k build --db postgresql://...`):
-- the same names, columns and rows; a list is an array of text.

CREATE VIEW weapons AS
SELECT
    w.*,
    d.name AS datasheet_name,
    coalesce((
        SELECT array_agg(CASE WHEN a.name = 'ANTI' THEN 'ANTI-' || a.target_keyword ELSE a.name END
                         ORDER BY a.position)
        FROM weapon_abilities a
        WHERE a.datasheet_id = w.datasheet_id AND a.weapon_name = w.weapon_name
          AND a.is_melee = w.is_melee AND a.profile_name = w.profile_name
    ), ARRAY[]::varchar[]) AS ability_names
FROM weapon_profiles w
JOIN datasheets d USING (datasheet_id);

CREATE VIEW units AS
SELECT
    d.name AS datasheet_name,
    d.faction_id,
    d.edition,
    d.game_mode,
    m.*,
    coalesce((SELECT array_agg(k.keyword ORDER BY k.keyword) FROM keywords k
              WHERE k.datasheet_id = m.datasheet_id), ARRAY[]::varchar[]) AS keywords
FROM model_profiles m
JOIN datasheets d USING (datasheet_id);
