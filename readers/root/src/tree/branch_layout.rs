//! The layout of a branch (how its entries' bytes are read), decided from its leaves, or for
//! a TBranchElement from its streamer type and the class descriptions.

use super::meta::{BranchMeta, Leaf};
use crate::class_shape;
use crate::file::RootFile;
use crate::layout::{Field, Layout, Real, Shape};
use crate::types::LeafType;

/// The layout of member `id` of `meta.element_class` (version `class_version`) from the
/// class's description: STL containers and strings (`fType` 300/365, their type name), TString
/// (65), `Double32_t`/`Float16_t` (9/19, their range in the member's title). A member of an
/// object (fType 0) holds one item per entry; a member of the elements of a split collection
/// (31, 41) one per element, until the entry ends.
pub(super) fn member_layout(
    meta: &BranchMeta,
    file: &RootFile,
    id: i32,
    typ: i32,
    class_version: i32,
) -> std::result::Result<Layout, String> {
    let infos = file.streamer_infos()?;
    let class = infos
        .class(&meta.element_class, class_version)
        .ok_or_else(|| format!("no description of class {:?}", meta.element_class))?;
    let element = usize::try_from(id)
        .ok()
        .and_then(|i| class.elements.get(i))
        .ok_or_else(|| format!("class {:?} has no member {id}", meta.element_class))?;
    let refuse = || {
        format!(
            "member {} of type {} (fType {typ})",
            element.name, element.type_name
        )
    };
    let item = match class_shape::member(&infos, element, 0)?.as_slice() {
        [(_, shape)] => shape.clone(),
        _ => return Err(refuse()),
    };
    let shape = match (typ, item) {
        // A vector of numbers per entry reads as fast as a top-level one.
        (0, Shape::Headed(inner)) => match *inner {
            Shape::List(ref item) => match **item {
                Shape::Num(t) => return Ok(Layout::Vector(t)),
                _ => Shape::Headed(inner),
            },
            other => Shape::headed(other),
        },
        (0, item) => item,
        // Objects inside collections are streamed member-wise: not read yet.
        (31 | 41, Shape::Headed(inner)) if matches!(*inner, Shape::Record { .. }) => {
            return Err(refuse());
        }
        // Containers carry one header per entry, then one per element.
        (31 | 41, Shape::Headed(inner)) => Shape::headed(Shape::Repeated(inner)),
        (31 | 41, item) => Shape::repeated(item),
        _ => return Err(refuse()),
    };
    Ok(Layout::Object(shape))
}

pub(super) fn element_layout(
    meta: &BranchMeta,
    id: i32,
    typ: i32,
    streamer_type: i32,
    version: u16,
) -> std::result::Result<Layout, String> {
    if meta.layout.is_ok() && meta.element_class.is_empty() {
        return meta.layout.clone();
    }
    if !(8..=10).contains(&version) {
        return Err(format!("TBranchElement version {version}"));
    }
    if !meta.branches.is_empty() {
        return Err(format!(
            "split object {:?} (read its sub-branches)",
            meta.element_class
        ));
    }
    let cls = meta.element_class.trim();
    if let Some(inner) = cls
        .strip_prefix("vector<")
        .and_then(|r| r.strip_suffix('>'))
        && id == -1
        && (typ == 0 || typ == -1)
    {
        if let Some(t) = LeafType::from_cpp(inner) {
            return Ok(Layout::Vector(t));
        }
        return Shape::of_cpp(inner)
            .map(|item| Layout::Object(Shape::headed(Shape::list(item))))
            .ok_or_else(|| format!("vector of {inner}"));
    }
    // A top-level string: its bytes alone, no header.
    if id == -1 && matches!(cls, "string" | "std::string" | "TString") {
        return Ok(Layout::Object(Shape::Text));
    }
    // A basic member of a split object (fType 0: one value per entry) or of the elements of a
    // split collection (41: std::vector and other STL; 31: TClonesArray): one value per element,
    // the entry's bytes are the values alone, so the basket's entry offsets give the count.
    if id >= 0
        && let Some(t) = LeafType::from_streamer_type(streamer_type)
    {
        match typ {
            0 => return Ok(Layout::Scalar(t)),
            31 | 41 => return Ok(Layout::Jagged(t)),
            _ => {}
        }
    }
    // A simple member of a split object: its single leaf says what it is.
    if typ == 0
        && id >= 0
        && meta
            .leaves
            .first()
            .is_some_and(|l| l.class != "TLeafElement")
    {
        return layout_of(meta);
    }
    Err(format!(
        "object branch of class {:?} (fType {typ}, fID {id}, member type {streamer_type})",
        meta.element_class
    ))
}

pub(super) fn layout_of(meta: &BranchMeta) -> std::result::Result<Layout, String> {
    match meta.leaves.as_slice() {
        [] => Err("no leaves".to_string()),
        [leaf] => leaf_layout(leaf),
        leaves => leaf_list(leaves),
    }
}

/// The layout of a branch's only leaf.
fn leaf_layout(leaf: &Leaf) -> std::result::Result<Layout, String> {
    let len = usize::try_from(leaf.len).map_err(|_| format!("negative fLen {}", leaf.len))?;
    match leaf.class.as_str() {
        // char*: one string per entry, whatever fLen (the longest string) says.
        "TLeafC" => return Ok(Layout::Object(Shape::Text)),
        "TLeafD32" | "TLeafF16" => {
            let real = Shape::Real(Real::from_title(&leaf.title, leaf.class == "TLeafD32"));
            return match (leaf.has_count, len) {
                (true, _) => Ok(Layout::Object(Shape::repeated(real))),
                (false, 1) => Ok(Layout::Object(real)),
                (false, n) => Err(format!("{} array of {n}", leaf.class)),
            };
        }
        _ => {}
    }
    let t = LeafType::from_leaf_class(&leaf.class, leaf.unsigned)
        .ok_or_else(|| format!("leaf class {}", leaf.class))?;
    if leaf.has_count {
        return Ok(Layout::Jagged(t));
    }
    Ok(match len {
        0 => return Err("fLen 0".to_string()),
        1 => Layout::Scalar(t),
        n => Layout::Fixed(t, n),
    })
}

/// A leaf list (`x/F:y/D:n/I`): fixed-size numeric leaves, one field each.
fn leaf_list(leaves: &[Leaf]) -> std::result::Result<Layout, String> {
    let field = |leaf: &Leaf| {
        let (leaf_type, len) = match leaf_layout(leaf)? {
            Layout::Scalar(t) => (t, 1),
            Layout::Fixed(t, n) => (t, n),
            other => {
                return Err(format!(
                    "leaf list with leaf {} of {}",
                    leaf.name,
                    other.describe()
                ));
            }
        };
        Ok(Field {
            name: leaf.name.clone(),
            leaf_type,
            len,
        })
    };
    let fields = leaves
        .iter()
        .map(field)
        .collect::<std::result::Result<Vec<_>, String>>()?;
    Ok(Layout::LeafList(fields))
}
