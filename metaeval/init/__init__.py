"""``metaeval init``: the user's package and CI found as they are, and the
scaffold written into their repository."""
