"""Mix: a validation split and category-balanced sampling with the exponent rule and a repetition cap."""
