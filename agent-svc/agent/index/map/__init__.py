"""A map of one site (/v2/map; an extraction's sites): its sitemaps, its pages' links and SearXNG's results."""
