"""What the model scripts share: the CNN, its training loop (Adam, cross
entropy, fixed seeds) and the ONNX export with a dynamic batch. Needs
Debian's python3-torch."""


def cnn(side):
    """Two Conv+ReLU+MaxPool blocks (16, 32 channels), Gemm 64, ReLU, Gemm
    10, for 1 x side x side images."""
    from torch import nn
    return nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(32 * (side // 4) ** 2, 64), nn.ReLU(),
        nn.Linear(64, 10))


def fit(model, x, y, epochs, batch, lr):
    import torch
    from torch import nn
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    xs, ys = torch.from_numpy(x), torch.from_numpy(y)
    for _ in range(epochs):
        perm = torch.randperm(len(xs))
        for i in range(0, len(xs), batch):
            idx = perm[i:i + batch]
            opt.zero_grad()
            nn.functional.cross_entropy(model(xs[idx]), ys[idx]).backward()
            opt.step()
    model.eval()


def export(model, side, path):
    import torch
    torch.onnx.export(model, torch.zeros(1, 1, side, side), path,
                      input_names=["image"], output_names=["logits"],
                      opset_version=13,
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}})
