"""The settings of a server that api_bench.py times the floor on: the checkout's own settings (any commit's),
with the benchmark's URL conf (floor_urls), which adds the floor view to the product's URLs. Neither module is
part of the product: api_bench.py puts this directory on the servers' import path, after the checkout."""

from kingscorner.settings import *  # noqa: F403

ROOT_URLCONF = "floor_urls"
