"""train_sft.load_rows on JSON Lines rows as `toolgym sft` writes them (argv: a scratch directory).

The rows' metadata has an integer reward for the first ~11 MB and a fractional one after: more than the block
`datasets` infers a JSON schema from. Prints one JSON line with what was loaded."""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import train_sft  # noqa: E402

scratch = Path(sys.argv[1])
rows = scratch / "rows.jsonl"
count = 24_000
with rows.open("w") as handle:
    for index in range(count):
        ids = [(index * 7 + position) % 2000 for position in range(100)]
        masks = [1 if position >= 90 else 0 for position in range(100)]
        reward = 1 if index < count - 40 else 0.92
        handle.write(json.dumps({"input_ids": ids, "assistant_masks": masks, "metadata": {"id": f"t/{index}", "reward": reward, "turn": 2}}) + "\n")
labelled = scratch / "labelled.jsonl"
labelled.write_text(json.dumps({"input_ids": [5, 6, 7], "labels": [-100, 6, 7], "metadata": {"reward": 0.5}}) + "\n")

dataset = train_sft.load_rows(str(rows))
last = dataset[count - 1]
small = train_sft.load_rows(str(labelled))
print(
    json.dumps(
        {
            "size": rows.stat().st_size,
            "rows": len(dataset),
            "columns": sorted(dataset.column_names),
            "last_input_ids": last["input_ids"][:3],
            "last_labels": last["labels"][88:92],
            "labelled": small[0]["labels"],
        }
    )
)
