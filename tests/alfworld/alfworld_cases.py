"""Shared ALFWorld test data: the generated-set size and 1 MB adversarial replies (issue #14 item 2)."""

GAMES_PER_TYPE = 2  # 12 games: every task type twice (generation is ~4 s a game on 2 cores)

MB = 1_000_000
ADVERSARIAL = {
    "newlines": "\n" * MB,
    "newlines_then_action": "\n" * MB + "Action: go to the moon",
    "spaces_lines": (" " * 999 + "\n") * (MB // 1000),
    "backticks": "`" * MB,
    "brackets": "[" * (MB // 2) + "]" * (MB // 2),
    "open_action_tags": "<action>" * (MB // 8),
    "open_belief_tags": "<belief>" * (MB // 8),
    "closing_tags_first": "</action>" * (MB // 18) + "<action>" * (MB // 16),
    "action_lines": "action:\n" * (MB // 8),
    "action_prefixes": "action" * (MB // 6),
    "action_spaces": "action" + " " * MB,
    "repeated_put": "put a in " * (MB // 9),
    "words": "go to fridge " * (MB // 13),
    "huge_belief": "<belief>" + '{"a":' * (MB // 5) + "</belief><think>x</think><action>go to the moon</action>",
    "huge_belief_brackets": "<belief>" + "[" * MB + "</belief><action>go to the moon</action>",
    "one_huge_tag": "<action>" + "x " * (MB // 2) + "</action>",
    "junk_unicode": ("\ud800\x00\u202e\U0010ffffé<ACTİON>" * (MB // 10)),
}
