"""Effects of rules on attacks: the vocabulary (``vocabulary``), the reader of rule text
(``reader``), the rules of a build and their ``effects`` rows (``rules``), the hand-kept entries
(``hand_kept``), applying effects to an attack (``apply``) and the coverage (``coverage``)."""
