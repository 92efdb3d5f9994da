"""The compile tier: OpInfo samples through ``torch.compile`` with the vendor's claimed backends."""
