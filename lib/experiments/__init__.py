"""The chapters' experiments: small models, sweeps and measurements that a chapter runs once and
reads back. They import the taught core (`lib.data`, `lib.model`, `lib.search`, ...), never the
other way round."""
