"""NonMaxSuppression inputs shared by the CPU tests (test_value_shaped_ops.py) and the CUDA ones
(cuda/test_cuda_nonzero_nms.py): random boxes in either encoding, and one random case's feeds."""
import numpy as np


def random_boxes(rng, batches, count, center_point_box):
    """[batches, count, 4] float32: (x, y, w, h) centers with positive sizes, or two corners in
    either order (center_point_box=0: onnxruntime takes min/max of each pair)."""
    if center_point_box:
        return np.concatenate([rng.uniform(0, 10, (batches, count, 2)), rng.uniform(0.5, 4, (batches, count, 2))],
                              axis=2).astype(np.float32)
    return rng.uniform(0, 10, (batches, count, 4)).astype(np.float32)


def random_nms_feeds(center_point_box, iou, max_out, score, count, batches=2, classes=3):
    """Boxes and uniform scores seeded by the case, with the optional inputs where not None."""
    rng = np.random.default_rng(int(iou * 10) + 3 * center_point_box)
    feeds = {"boxes": random_boxes(rng, batches, count, center_point_box),
             "scores": rng.uniform(0, 1, (batches, classes, count)).astype(np.float32)}
    if max_out is not None:
        feeds["max_output_boxes_per_class"] = np.array([max_out], np.int64)
    feeds["iou_threshold"] = np.array([iou], np.float32)
    if score is not None:
        feeds["score_threshold"] = np.array([score], np.float32)
    return feeds
