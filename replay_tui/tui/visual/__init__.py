"""The Design2Code visual metrics in the app: the block-match inspector and the batch table."""
