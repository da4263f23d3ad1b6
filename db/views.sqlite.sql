-- The views of db/views.sql in SQLite's SQL (built by `wh40k build --db sqlite:///FILE`):
-- the same names, columns and rows; a list is a JSON array as text.

CREATE VIEW weapons AS
SELECT
    w.*,
    d.name AS datasheet_name,
    (SELECT json_group_array(n) FROM (
        SELECT CASE WHEN a.name = 'ANTI' THEN 'ANTI-' || a.target_keyword ELSE a.name END AS n
        FROM weapon_abilities a
        WHERE a.datasheet_id = w.datasheet_id AND a.weapon_name = w.weapon_name
          AND a.is_melee = w.is_melee AND a.profile_name = w.profile_name
        ORDER BY a.position)) AS ability_names
FROM weapon_profiles w
JOIN datasheets d USING (datasheet_id);

CREATE VIEW units AS
SELECT
    d.name AS datasheet_name,
    d.faction_id,
    d.edition,
    d.game_mode,
    m.*,
    (SELECT json_group_array(keyword) FROM (
        SELECT k.keyword FROM keywords k WHERE k.datasheet_id = m.datasheet_id ORDER BY k.keyword)) AS keywords
FROM model_profiles m
JOIN datasheets d USING (datasheet_id);
