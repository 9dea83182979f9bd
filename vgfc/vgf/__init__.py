"""The VGF container: the one model of a file, and its layout, encoding, decoding and diff."""
