"""The built-in demo corpus: common.demo.generator writes it, common.demo.truth scores a stage against it."""
