//! The HotSpot VM model read from outside the JVM (issue 28, `inspect threads`). For now only
//! [`codec`]: the pure decoders of HotSpot's compressed metadata formats (UNSIGNED5 streams, line
//! number tables, PcDesc/ScopeDesc debug info, field metadata, Symbols, `java.lang.String`
//! values) — bytes in, typed values out, no memory reads. The reading side (vmStructs tables,
//! threads, frames) builds on them.

pub(crate) mod codec;
