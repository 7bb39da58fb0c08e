//! RNTuples: every value of every field of the committed RNTuple fixtures equals what ROOT
//! 6.40's RNTupleReader read back (`tests/fixtures/rntuple_*.json`, written by
//! `tools/root_fixtures.py`), for every codec and the encodings the writer does not choose by
//! default; types this reader does not support are errors that name them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::float_cmp)]

mod util;

use root_reader::rntuple::ColumnType;
use root_reader::{Error, RootFile, Values};
use serde_json::{Map, Value, json};

/// Item `i` of `values` as the JSON the fixture script records.
fn item(values: &Values, i: usize) -> Value {
    match values {
        Values::Bool(v) => json!(v[i]),
        Values::I8(v) => json!(v[i]),
        Values::U8(v) => json!(v[i]),
        Values::I16(v) => json!(v[i]),
        Values::U16(v) => json!(v[i]),
        Values::I32(v) => json!(v[i]),
        Values::U32(v) => json!(v[i]),
        Values::I64(v) => json!(v[i]),
        Values::U64(v) => json!(v[i]),
        Values::F32(v) => json!(f64::from(v[i])),
        Values::F64(v) => json!(v[i]),
        Values::Text(s) => json!(String::from_utf8(s.get(i).unwrap().to_vec()).unwrap()),
        Values::Lists(l) => {
            let (a, b) = (l.offsets[i] as usize, l.offsets[i + 1] as usize);
            Value::Array((a..b).map(|k| item(&l.items, k)).collect())
        }
        Values::Record(fields) => {
            let mut m = Map::new();
            for f in fields {
                assert_eq!(f.len, 1);
                m.insert(f.name.clone(), item(&f.values, i));
            }
            Value::Object(m)
        }
    }
}

fn expected(name: &str) -> Value {
    let text = std::fs::read_to_string(util::fixture(&format!("{name}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The RNTuple `events` of fixture `name`.
fn events(name: &str) -> root_reader::RNTuple {
    let file = RootFile::open(util::fixture(&format!("{name}.root"))).unwrap();
    file.rntuple("events").unwrap()
}

/// The fixtures of several clusters and every kind of field, with their RNTuple.
fn several_clusters() -> Vec<(&'static str, root_reader::RNTuple)> {
    [
        "rntuple_zstd",
        "rntuple_none",
        "rntuple_encodings",
        "rntuple_classes",
    ]
    .into_iter()
    .map(|name| (name, events(name)))
    .collect()
}

/// Compares every field with values in the fixture's JSON; returns the number of values.
fn check(name: &str) -> usize {
    let json = expected(name);
    let file = RootFile::open(util::fixture(&format!("{name}.root"))).unwrap();
    let listed: Vec<String> = file
        .rntuples()
        .unwrap()
        .into_iter()
        .map(|e| e.path)
        .collect();
    assert_eq!(listed, vec!["events".to_owned()], "{name}");
    assert!(file.trees().unwrap().is_empty(), "{name}");
    let ntuple = file.rntuple("events").unwrap();
    let exp = &json["ntuples"]["events"];
    let entries = exp["entries"].as_u64().unwrap();
    assert_eq!(ntuple.entries(), entries, "{name}");
    let fields = exp["fields"].as_object().unwrap();
    // (serde_json's map is sorted by name: compare as sets.)
    let mut listed: Vec<(String, String)> = ntuple
        .fields()
        .into_iter()
        .map(|f| (f.name, f.type_name))
        .collect();
    listed.sort();
    let recorded: Vec<(String, String)> = fields
        .iter()
        .map(|(k, v)| (k.clone(), v["type"].as_str().unwrap().to_owned()))
        .collect();
    assert_eq!(listed, recorded, "{name}: fields and types");
    let mut compared = 0;
    for (field, exp) in fields {
        let Some(values) = exp.get("values") else {
            continue;
        };
        let values = values.as_array().unwrap();
        let got = ntuple
            .read_field(field)
            .unwrap_or_else(|e| panic!("{name}: {field}: {e}"));
        // A class without data members has no length of its own (each entry is `{}`).
        if !got.is_lengthless() {
            assert_eq!(got.len(), values.len(), "{name}: {field}");
        }
        for (i, want) in values.iter().enumerate() {
            assert_eq!(&item(&got, i), want, "{name}: {field} entry {i}");
            compared += 1;
        }
    }
    compared
}

#[test]
fn every_codec_matches_root() {
    for codec in ["zlib", "zstd", "lz4", "lzma", "none"] {
        let n = check(&format!("rntuple_{codec}"));
        assert_eq!(n, 120 * 20, "rntuple_{codec}");
    }
}

#[test]
fn other_encodings_match_root() {
    assert_eq!(check("rntuple_encodings"), 120 * 23);
}

#[test]
fn classes_collections_and_late_fields_match_root() {
    // RntEvent (a base class, a vector of classes), optional, unique_ptr, set, map, and two
    // fields added after 40 entries (deferred columns: zeros and empty vectors before).
    assert_eq!(check("rntuple_classes"), 120 * 7);
    let file = RootFile::open(util::fixture("rntuple_classes.root")).unwrap();
    let nt = file.rntuple("events").unwrap();
    let late = nt.read::<f32>("late").unwrap();
    assert!(late[..40].iter().all(|&x| x == 0.0));
    assert_eq!(late[41], 123.0);
    assert_eq!(nt.footer().extension.fields.len(), 3);
    assert!(
        nt.column_descs()
            .iter()
            .any(|c| c.first_element == Some(40))
    );
    // Cluster 0 was written before the fields existed.
    assert!(nt.clusters()[0].columns.len() < nt.column_descs().len());
}

#[test]
fn projections_and_classes_without_data_match_root() {
    // RVec<float> projected onto a vector's items and onto a member of a vector of records
    // (as NanoAOD converted by RNTupleImporter), a class without data members alone and in
    // a vector.
    assert_eq!(check("rntuple_projections"), 120 * 6);
    let file = RootFile::open(util::fixture("rntuple_projections.root")).unwrap();
    let nt = file.rntuple("events").unwrap();
    assert_eq!(
        nt.read_jagged::<f32>("jet_pt").unwrap(),
        nt.read_jagged::<f32>("jets").unwrap()
    );
    let nothing = nt.read_field("nothing").unwrap();
    assert!(nothing.is_lengthless());
    assert!(nt.stored_pages("nothing").unwrap().is_empty());
    // A projection reads its source's pages.
    assert_eq!(
        nt.stored_pages("jet_pt").unwrap(),
        nt.stored_pages("jets").unwrap()
    );
}

#[test]
fn fixed_size_arrays_are_lists() {
    let file = RootFile::open(util::fixture("rntuple_encodings.root")).unwrap();
    let nt = file.rntuple("events").unwrap();
    let arr = nt.read_jagged::<f32>("arr").unwrap();
    assert_eq!(arr.get(2), Some(&[2.0, 3.0, 4.0][..]));
    let bits = nt.read_jagged::<bool>("bits").unwrap();
    // 37 = 0b100101, least significant bit first.
    assert_eq!(
        bits.get(1),
        Some(
            &[
                true, false, true, false, false, true, false, false, false, false
            ][..]
        )
    );
    assert_eq!(nt.read::<i32>("at").unwrap()[3], -15);
    // A variant: one list per alternative, one item in the list of the alternative held.
    let Values::Record(alternatives) = nt.read_field("var").unwrap() else {
        panic!("a variant is a record");
    };
    let names: Vec<&str> = alternatives.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["_0", "_1"]);
    // The alias column of the projection is in the header.
    assert_eq!(nt.header().schema.aliases.len(), 1);
}

#[test]
fn entry_ranges_read_only_their_clusters_and_match_full_reads() {
    // Clusters of 40, 40, 20, 20 entries (30 each in rntuple_classes, whose late fields start
    // reading at cluster 0).
    for (name, nt) in several_clusters() {
        for field in nt.fields() {
            let Ok(full) = nt.read_field(&field.name) else {
                continue;
            };
            for (start, stop) in [
                (0, 0),
                (0, 1),
                (5, 45),
                (39, 41),
                (40, 80),
                (85, 120),
                (119, 120),
                (120, 120),
                (0, 120),
            ] {
                let part = nt
                    .read_field_range(&field.name, start, stop)
                    .unwrap_or_else(|e| panic!("{name} {} {start}..{stop}: {e}", field.name));
                assert_eq!(part.len(), (stop - start) as usize);
                for i in start..stop {
                    assert_eq!(
                        item(&part, (i - start) as usize),
                        item(&full, i as usize),
                        "{name} {} {start}..{stop} entry {i}",
                        field.name
                    );
                }
            }
        }
    }
    let file = RootFile::open(util::fixture("rntuple_zstd.root")).unwrap();
    let nt = file.rntuple("events").unwrap();
    assert!(matches!(
        nt.read_field_range("f", 10, 121),
        Err(Error::EntryOutOfRange { .. })
    ));
    assert!(matches!(
        nt.read_field_range("vf._0", 0, 1),
        Err(Error::UnsupportedField { .. })
    ));
}

#[test]
fn clusters_read_on_several_threads_equal_one_thread() {
    // Four clusters each: on a pool of several threads, runs of clusters are read at once
    // and joined (collections' offsets shifted), which must give the one-thread read.
    let pool = |n| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .unwrap()
    };
    let (one, four) = (pool(1), pool(4));
    for (name, nt) in several_clusters() {
        assert!(nt.clusters().len() > 1, "{name}");
        for field in nt.fields() {
            let alone = one.install(|| nt.read_field_parallel(&field.name));
            let together = four.install(|| nt.read_field_parallel(&field.name));
            match (&alone, nt.read_field(&field.name)) {
                (Ok(a), Ok(b)) => assert_eq!(a, &b, "{name} {}", field.name),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{name} {}: {a:?} against {b:?}", field.name),
            }
            match (alone, together) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{name} {}", field.name),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string()),
                (a, b) => panic!("{name} {}: {a:?} against {b:?}", field.name),
            }
        }
    }
}

#[test]
fn every_page_of_a_readable_field_reads_on_its_own() {
    // What readspeed times: each page read, checked, decompressed and decoded alone, from the
    // file or from its bytes as they lie in the file (readspeed's memory map).
    let projections = ("rntuple_projections", events("rntuple_projections"));
    for (name, nt) in several_clusters().into_iter().chain([projections]) {
        let bytes = std::fs::read(util::fixture(&format!("{name}.root"))).unwrap();
        let mut scratch = root_reader::rntuple::columns::UnitScratch::default();
        let mut lying = root_reader::rntuple::columns::UnitScratch::default();
        for field in nt.fields() {
            if nt.read_field(&field.name).is_err() {
                continue;
            }
            let units = nt.page_units(&field.name).unwrap();
            for unit in &units {
                nt.read_unit(unit, &mut scratch)
                    .unwrap_or_else(|e| panic!("{name} {}: {e}", field.name));
                let (offset, len) = nt.unit_extent(unit).unwrap();
                let stored = &bytes[offset as usize..][..len];
                nt.unpack_unit(unit, stored, &mut lying).unwrap();
                assert_eq!(scratch.page(), lying.page(), "{name} {}", field.name);
                // Another length than the page's, or a flipped bit, is an error.
                assert!(
                    nt.unpack_unit(unit, &stored[..len - 1], &mut lying)
                        .is_err()
                );
                if unit.stored().stored != unit.stored().bytes {
                    let mut flipped = stored.to_vec();
                    flipped[0] ^= 0x10;
                    assert!(nt.unpack_unit(unit, &flipped, &mut lying).is_err());
                }
            }
            let pages: Vec<_> = units.iter().map(|u| u.stored()).collect();
            assert_eq!(pages, nt.stored_pages(&field.name).unwrap());
        }
    }
}

#[test]
fn pages_go_through_the_files_basket_cache() {
    // A second read of a field is answered from the LRU the TTree reader uses; a file whose
    // cache keeps nothing reads the same values.
    for (name, nt) in several_clusters() {
        let stats = || nt.file().cache().stats();
        let field = nt
            .fields()
            .into_iter()
            .find(|f| nt.read_field(&f.name).is_ok());
        let field = field.unwrap().name;
        let first = nt.read_field(&field).unwrap();
        let before = stats();
        assert!(before.entries > 0, "{name}: no page kept");
        let again = nt.read_field(&field).unwrap();
        let after = stats();
        assert_eq!(first, again, "{name} {field}");
        assert!(after.hits > before.hits, "{name} {field}: {after:?}");
        assert_eq!(
            after.misses, before.misses,
            "{name} {field}: read again from the file"
        );
        let bare = RootFile::open_with_cache(util::fixture(&format!("{name}.root")), 0).unwrap();
        let bare = bare.rntuple("events").unwrap();
        assert_eq!(bare.read_field(&field).unwrap(), first, "{name} {field}");
        assert_eq!(bare.file().cache().stats().entries, 0);
    }
}

#[test]
fn strings_are_lent_where_they_lie() {
    // Every std::string field of the fixtures, lent page by page, equals its column read (the
    // strings that run across pages: a unit test of `StringWalk`).
    let mut compared = 0;
    let fixtures = several_clusters().into_iter().chain([
        ("rntuple_projections", events("rntuple_projections")),
        ("rntuple_empty", events("rntuple_empty")),
    ]);
    for (name, nt) in fixtures {
        for field in nt.fields() {
            let Ok(Values::Text(column)) = nt.read_field(&field.name) else {
                continue;
            };
            let mut lent = Vec::new();
            let count = nt
                .for_each_string(&field.name, |s| {
                    lent.push(s.to_vec());
                    Ok(())
                })
                .unwrap_or_else(|e| panic!("{name} {}: {e}", field.name));
            assert_eq!(count as usize, column.len(), "{name} {}", field.name);
            let read: Vec<Vec<u8>> = (0..column.len())
                .map(|i| column.get(i).unwrap().to_vec())
                .collect();
            assert_eq!(lent, read, "{name} {}", field.name);
            compared += 1;
        }
    }
    assert!(compared >= 4, "{compared} string fields");
    // Not a string field: a clear error.
    let nt = events("rntuple_zstd");
    let err = nt.for_each_string("f", |_| Ok(())).unwrap_err().to_string();
    assert!(err.contains("std::string"), "{err}");
}

#[test]
fn zero_entries() {
    assert_eq!(check("rntuple_empty"), 0);
    let file = RootFile::open(util::fixture("rntuple_empty.root")).unwrap();
    let ntuple = file.rntuple("events").unwrap();
    assert_eq!(ntuple.read::<f32>("f").unwrap(), Vec::<f32>::new());
    let vvf = ntuple.read_field("vvf").unwrap();
    assert_eq!(vvf.len(), 0);
}

#[test]
fn fixtures_use_the_encodings_they_claim() {
    // The compressed files use the split encodings, the uncompressed one plain ones; several
    // clusters and several pages per column and cluster.
    let kinds = |name: &str| {
        let file = RootFile::open(util::fixture(&format!("{name}.root"))).unwrap();
        let nt = file.rntuple("events").unwrap();
        assert_eq!(nt.clusters().len(), 4, "{name}");
        assert!(nt.clusters()[0].columns.iter().any(|c| c.pages.len() > 2));
        nt.column_descs()
            .iter()
            .map(|c| c.kind.unwrap())
            .collect::<Vec<_>>()
    };
    let split = kinds("rntuple_zstd");
    for k in [
        ColumnType::SplitInt16,
        ColumnType::SplitUInt64,
        ColumnType::SplitReal32,
        ColumnType::SplitIndex64,
        ColumnType::Bit,
        ColumnType::Char,
    ] {
        assert!(split.contains(&k), "{k:?}");
    }
    let plain = kinds("rntuple_none");
    for k in [ColumnType::Int32, ColumnType::Real64, ColumnType::Index64] {
        assert!(plain.contains(&k), "{k:?}");
    }
    let other = kinds("rntuple_encodings");
    for k in [
        ColumnType::Index32,
        ColumnType::SplitIndex32,
        ColumnType::Real16,
        ColumnType::Real32Trunc,
        ColumnType::Real32Quant,
    ] {
        assert!(other.contains(&k), "{k:?}");
    }
}

#[test]
fn typed_reads() {
    let file = RootFile::open(util::fixture("rntuple_zlib.root")).unwrap();
    let nt = file.rntuple("events").unwrap();
    let f: Vec<f32> = nt.read("f").unwrap();
    assert_eq!(f[0], -20.0);
    assert_eq!(nt.read::<u64>("ul").unwrap()[1], u64::MAX);
    assert!(matches!(
        nt.read::<f64>("f"),
        Err(Error::TypeMismatch { .. })
    ));
    let vf = nt.read_jagged::<f32>("vf").unwrap();
    assert_eq!(vf.len(), 120);
    assert_eq!(vf.get(3), Some(&[3.0, 3.25, 3.5][..]));
    assert_eq!(vf.get(4), Some(&[][..]));
    // Subfields by dotted path: per entry in a record, per item in a collection.
    assert_eq!(nt.read::<i32>("p._0").unwrap()[2], -6);
    assert!(nt.is_per_entry(nt.field_id("p._1").unwrap()));
    let items = nt.read::<f32>("vf._0").unwrap();
    assert_eq!(items.len(), vf.values.len());
    assert!(!nt.is_per_entry(nt.field_id("vf._0").unwrap()));
    assert!(!nt.is_per_entry(nt.field_id("vvf._0._0").unwrap()));
    assert!(matches!(
        nt.read_field("nope"),
        Err(Error::NoSuchField { .. })
    ));
    // A TTree request names what the object is.
    let err = file.tree("events").unwrap_err().to_string();
    assert!(err.contains("ROOT::RNTuple"), "{err}");
}

#[test]
fn unsupported_types_are_named() {
    let file = RootFile::open(util::fixture("rntuple_encodings.root")).unwrap();
    let nt = file.rntuple("events").unwrap();
    for (field, ty) in [("named", "TNamed")] {
        match nt.read_field(field) {
            Err(Error::UnsupportedField { detail, .. }) => {
                assert!(detail.contains(ty), "{field}: {detail}");
            }
            other => panic!("{field}: {other:?}"),
        }
    }
}
