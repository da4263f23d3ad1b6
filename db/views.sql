-- Views over the built database, created by the build after the tables are loaded.
-- Each statement ends with a semicolon on its own line end.

-- Every weapon profile with its datasheet's name and its abilities as a list of names:
-- ANTI-KEYWORD for Anti abilities (ANTI-INFANTRY), the canonical name otherwise.
CREATE VIEW weapons AS
SELECT
    w.*,
    d.name AS datasheet_name,
    coalesce((
        SELECT list(CASE WHEN a.name = 'ANTI' THEN 'ANTI-' || a.target_keyword ELSE a.name END
                    ORDER BY a.position)
        FROM weapon_abilities a
        WHERE a.datasheet_id = w.datasheet_id AND a.weapon_name = w.weapon_name
          AND a.is_melee = w.is_melee AND a.profile_name = w.profile_name
    ), []) AS ability_names
FROM weapon_profiles w
JOIN datasheets d USING (datasheet_id);

-- Every model line with its datasheet's name, faction and keywords.
CREATE VIEW units AS
SELECT
    d.name AS datasheet_name,
    d.faction_id,
    d.edition,
    d.game_mode,
    m.*,
    coalesce((SELECT list(k.keyword ORDER BY k.keyword) FROM keywords k
              WHERE k.datasheet_id = m.datasheet_id), []) AS keywords
FROM model_profiles m
JOIN datasheets d USING (datasheet_id);
