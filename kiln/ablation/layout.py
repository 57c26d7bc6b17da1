"""Where an ablation keeps its files under DATA_DIR: the names every part of it reads and writes."""

ABLATION_DIR = "ablation"
SUMMARY_FILE = "summary.json"
ARM_FILE = "arm.json"  # in arms/<arm>/ once the arm's stream is written
RESULT_FILE = "result.json"  # in runs/<arm>-seed<seed>/ once the run is trained and evaluated
