"""Tool policy: groups, profiles, the stage pipeline of allow/deny lists."""
