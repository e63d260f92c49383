"""What a mutation run keeps between runs, below the isolations: the baseline's
coverage map (``coverage_cache``, its fields checked in ``coverage_data``, the
functions of a changed file in ``source_shape``), the coverage file shards share
(``coverage_file``), the result cache (``result_cache``) and what of the
configuration both depend on (``config_digest``). Reads and writes files; runs no
test."""
