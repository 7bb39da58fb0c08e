-- A machine's testbed: the name a run gave its machine class (`BENCH_MACHINE`), whose
-- fingerprint is a hash of that name. NULL for machines identified by their hardware.
ALTER TABLE machines ADD COLUMN testbed TEXT;
