"""The distributed tier: the device's ``torch.distributed`` collectives across local ranks."""
