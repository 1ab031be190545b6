//! A server's input schema turned into one that is safe to hand to the validator: every
//! `$ref` followed and written out in place, within bounds, so what is compiled has no
//! references left, a bounded size and a bounded depth.
//!
//! The schema comes from an MCP server, which any user may add: it is hostile input. A
//! validator that follows references as it checks can loop forever on
//! `{"allOf": [{"$ref": "#"}]}` (a stack overflow, which takes the whole process down) and
//! grow without bound on definitions that refer to each other. Here, everything is walked
//! with explicit stacks (never recursion), and:
//!
//! - the schema as sent is at most [`Limits::max_depth`] deep and [`Limits::max_values`] big;
//! - a `$ref` is followed only inside the schema (`#…`, or the root's own `$id`); one that
//!   points elsewhere, or at nothing, refuses the schema;
//! - references that lead back to themselves without going deeper into the arguments (through
//!   `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`, dependent schemas or `$ref`
//!   itself) refuse the schema: such a schema checks nothing and never ends;
//! - a recursive definition reached again deeper in the arguments (a tree of nodes, say) is
//!   written out [`Limits::recursion`] more times and then accepts anything below (the
//!   server still checks what it gets);
//! - the written-out schema is at most [`Limits::max_expanded`] values and
//!   [`Limits::max_levels`] subschemas deep; when recursion makes it bigger, it is written out
//!   again with fewer rounds of recursion, and refused when even none is too big.

use std::rc::Rc;

use serde_json::{Map, Value};

/// The bounds of one schema.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// JSON nesting of the schema as sent.
    pub max_depth: usize,
    /// Values (objects, arrays, strings, …) in the schema as sent.
    pub max_values: usize,
    /// Values in the schema once its references are written out.
    pub max_expanded: usize,
    /// Subschemas within subschemas once references are written out.
    pub max_levels: usize,
    /// Times a recursive definition is written out again below itself.
    pub recursion: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_depth: 64,
            max_values: 20_000,
            max_expanded: 50_000,
            max_levels: 32,
            recursion: 3,
        }
    }
}

/// Why a schema cannot be checked safely. The message completes "its input schema cannot be
/// checked safely: …".
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SchemaRefused {
    #[error("it is nested deeper than {0} levels")]
    TooDeep(usize),
    #[error("it has more than {0} parts")]
    TooLarge(usize),
    #[error("`$ref` `{0}` points outside the schema, and ARS fetches no other schema")]
    External(String),
    #[error("`$ref` `{0}` points to nothing in the schema")]
    Dangling(String),
    #[error(
        "its references loop without going deeper into the arguments (`{0}` leads back to itself)"
    )]
    Loop(String),
    #[error("written out with its references followed, it has more than {0} parts")]
    TooExpansive(usize),
    #[error("written out with its references followed, it is nested deeper than {0} levels")]
    ExpandsTooDeep(usize),
    #[error("it uses {0}, which ARS does not follow")]
    Unsupported(&'static str),
}

/// What writing a schema out found.
#[derive(Debug)]
pub struct Expanded {
    /// The schema with no `$ref` left.
    pub schema: Value,
    /// Whether some recursive definition was cut short (deeper values go unchecked).
    pub cut: bool,
}

/// `schema` with its references written out, or why that cannot be done safely.
pub fn expand(schema: &Value, limits: Limits) -> Result<Expanded, SchemaRefused> {
    measure(schema, limits)?;
    let targets = Targets::collect(schema)?;
    let mut recursion = limits.recursion;
    loop {
        match Expansion::new(&targets, limits, recursion).run(schema) {
            Ok(expanded) => return Ok(expanded),
            // Recursion made it too big: try again with fewer rounds of it.
            Err(Stop::Exceeded { recursed: true, .. }) if recursion > 0 => recursion -= 1,
            Err(Stop::Exceeded { deep: false, .. }) => {
                return Err(SchemaRefused::TooExpansive(limits.max_expanded));
            }
            Err(Stop::Exceeded { deep: true, .. }) => {
                return Err(SchemaRefused::ExpandsTooDeep(limits.max_levels));
            }
            Err(Stop::Refused(refused)) => return Err(refused),
        }
    }
}

/// Refuses a schema deeper or bigger than the limits, without recursion.
fn measure(schema: &Value, limits: Limits) -> Result<(), SchemaRefused> {
    let mut stack = vec![(schema, 1usize)];
    let mut values = 0usize;
    while let Some((value, depth)) = stack.pop() {
        values += 1;
        if values > limits.max_values {
            return Err(SchemaRefused::TooLarge(limits.max_values));
        }
        if depth > limits.max_depth {
            return Err(SchemaRefused::TooDeep(limits.max_depth));
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|item| (item, depth + 1))),
            Value::Object(map) => stack.extend(map.values().map(|item| (item, depth + 1))),
            _ => {}
        }
    }
    Ok(())
}

/// The number of values in `value` (itself included), without recursion.
fn size(value: &Value) -> usize {
    let mut stack = vec![value];
    let mut values = 0usize;
    while let Some(value) = stack.pop() {
        values += 1;
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    values
}

/// How a keyword holds subschemas, and how they apply.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Applies {
    /// To the same value (`allOf`, `not`, …).
    InPlace,
    /// To values inside it (`properties`, `items`, …).
    Below,
    /// Not at all: definitions, reached only by `$ref`.
    Never,
}

/// What a keyword holds.
#[derive(Clone, Copy)]
enum Holds {
    One(Applies),
    List(Applies),
    Map(Applies),
    /// A keyword that only annotates: left out of what is compiled.
    Annotation,
    /// Anything else: copied as it is.
    Data,
}

fn keyword(name: &str, value: &Value) -> Holds {
    use Applies::*;
    let schema = value.is_object() || value.is_boolean();
    match name {
        "not" | "if" | "then" | "else" if schema => Holds::One(InPlace),
        "additionalProperties"
        | "unevaluatedProperties"
        | "propertyNames"
        | "additionalItems"
        | "unevaluatedItems"
        | "contains"
        | "contentSchema"
        | "items"
            if schema =>
        {
            Holds::One(Below)
        }
        "allOf" | "anyOf" | "oneOf" if value.is_array() => Holds::List(InPlace),
        "prefixItems" | "items" if value.is_array() => Holds::List(Below),
        "properties" | "patternProperties" if value.is_object() => Holds::Map(Below),
        "dependentSchemas" | "dependencies" if value.is_object() => Holds::Map(InPlace),
        "$defs" | "definitions" => Holds::Map(Never),
        "description" | "title" | "examples" | "default" | "$comment" | "readOnly"
        | "writeOnly" | "deprecated" | "$id" | "id" | "$anchor" | "$dynamicAnchor"
        | "$recursiveAnchor" | "$schema" | "$ref" => Holds::Annotation,
        _ => Holds::Data,
    }
}

/// The subschemas a keyword holds, with the JSON-pointer step to each.
fn subschemas(holds: Holds, value: &Value) -> Vec<(String, &Value)> {
    let is_schema = |v: &Value| v.is_object() || v.is_boolean();
    match (holds, value) {
        (Holds::One(_), value) => vec![(String::new(), value)],
        (Holds::List(_), Value::Array(items)) => items
            .iter()
            .enumerate()
            .filter(|(_, item)| is_schema(item))
            .map(|(i, item)| (i.to_string(), item))
            .collect(),
        (Holds::Map(_), Value::Object(map)) => map
            .iter()
            .filter(|(_, item)| is_schema(item))
            .map(|(name, item)| (escape(name), item))
            .collect(),
        _ => Vec::new(),
    }
}

/// A JSON-pointer token for `name`.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Where references may point: the root's own `$id` and the anchors in it.
struct Targets<'a> {
    root: &'a Value,
    /// The root's `$id` without its fragment, if it has one.
    base: Option<String>,
    /// `$anchor` (and `$id: "#name"`) names with the pointer of their schema.
    anchors: Vec<(String, String)>,
    /// Whether the schema says it is draft 4, 6 or 7, where `$ref` replaces its siblings.
    legacy: bool,
}

impl<'a> Targets<'a> {
    /// Walks every subschema (definitions too) once, without recursion.
    fn collect(root: &'a Value) -> Result<Self, SchemaRefused> {
        let draft = root.get("$schema").and_then(Value::as_str).unwrap_or("");
        let legacy = draft.starts_with("http://json-schema.org/draft-0");
        // `id` is draft 4's `$id`; later drafts ignore it.
        let id_keyword = if draft.starts_with("http://json-schema.org/draft-04") {
            "id"
        } else {
            "$id"
        };
        let base = root
            .get(id_keyword)
            .and_then(Value::as_str)
            .filter(|id| !id.starts_with('#'))
            .map(|id| id.split('#').next().unwrap_or(id).to_owned());
        let mut anchors = Vec::new();
        let mut stack = vec![(root, String::new())];
        while let Some((value, pointer)) = stack.pop() {
            let Value::Object(map) = value else { continue };
            for (name, item) in map {
                match (name.as_str(), item) {
                    ("$dynamicRef", _) => return Err(SchemaRefused::Unsupported("`$dynamicRef`")),
                    ("$recursiveRef", _) => {
                        return Err(SchemaRefused::Unsupported("`$recursiveRef`"));
                    }
                    ("$anchor" | "$dynamicAnchor", Value::String(anchor)) => {
                        anchors.push((anchor.clone(), pointer.clone()));
                    }
                    (name, Value::String(id)) if name == id_keyword => {
                        if let Some(anchor) = id.strip_prefix('#') {
                            anchors.push((anchor.to_owned(), pointer.clone()));
                        } else if !pointer.is_empty() {
                            return Err(SchemaRefused::Unsupported("a nested `$id`"));
                        }
                    }
                    _ => {
                        let holds = keyword(name, item);
                        for (step, sub) in subschemas(holds, item) {
                            let mut at = format!("{pointer}/{}", escape(name));
                            if !matches!(holds, Holds::One(_)) {
                                at.push('/');
                                at.push_str(&step);
                            }
                            stack.push((sub, at));
                        }
                    }
                }
            }
        }
        Ok(Self {
            root,
            base,
            anchors,
            legacy,
        })
    }

    /// The schema `reference` points to, with its pointer (which names it).
    fn resolve(&self, reference: &str) -> Result<(Rc<str>, &'a Value), SchemaRefused> {
        let fragment = match reference.split_once('#') {
            Some(("", fragment)) => fragment,
            Some((base, fragment)) if self.base.as_deref() == Some(base) => fragment,
            None if self.base.as_deref() == Some(reference) => "",
            _ => return Err(SchemaRefused::External(cut(reference))),
        };
        let fragment = percent_encoding::percent_decode_str(fragment).decode_utf8_lossy();
        let pointer = if fragment.is_empty() || fragment.starts_with('/') {
            fragment.into_owned()
        } else {
            match self.anchors.iter().find(|(name, _)| *name == fragment) {
                Some((_, pointer)) => pointer.clone(),
                None => return Err(SchemaRefused::Dangling(cut(reference))),
            }
        };
        match self.root.pointer(&pointer) {
            Some(target) if target.is_object() || target.is_boolean() => {
                Ok((Rc::from(pointer), target))
            }
            _ => Err(SchemaRefused::Dangling(cut(reference))),
        }
    }
}

/// A reference as quoted in a message: at most 100 characters.
fn cut(reference: &str) -> String {
    match reference.char_indices().nth(100) {
        Some((at, _)) => format!("{}…", &reference[..at]),
        None => reference.to_owned(),
    }
}

/// The way from the root to a subschema being written out: the references followed, and
/// where the way went deeper into the arguments.
enum Step {
    Ref(Rc<str>),
    Below,
}

struct Link {
    step: Step,
    up: Option<Rc<Link>>,
}

fn push(up: &Option<Rc<Link>>, step: Step) -> Option<Rc<Link>> {
    Some(Rc::new(Link {
        step,
        up: up.clone(),
    }))
}

/// Links from `from` up to the root.
fn way(from: &Option<Rc<Link>>) -> impl Iterator<Item = &Link> {
    std::iter::successors(from.as_deref(), |link| link.up.as_deref())
}

/// One position of the output.
#[derive(Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

/// One subschema to write out at `path` in the output.
struct Item<'a> {
    src: &'a Value,
    path: Vec<Seg>,
    level: usize,
    way: Option<Rc<Link>>,
}

/// Why one attempt stopped.
enum Stop {
    /// Past a limit; `recursed` when recursion was written out, so fewer rounds may fit.
    Exceeded {
        recursed: bool,
        deep: bool,
    },
    Refused(SchemaRefused),
}

impl From<SchemaRefused> for Stop {
    fn from(refused: SchemaRefused) -> Self {
        Self::Refused(refused)
    }
}

/// One attempt at writing a schema out, with a given number of rounds of recursion.
struct Expansion<'t, 'a> {
    targets: &'t Targets<'a>,
    limits: Limits,
    recursion: usize,
    values: usize,
    recursed: bool,
    cut: bool,
}

impl<'t, 'a> Expansion<'t, 'a> {
    fn new(targets: &'t Targets<'a>, limits: Limits, recursion: usize) -> Self {
        Self {
            targets,
            limits,
            recursion,
            values: 0,
            recursed: false,
            cut: false,
        }
    }

    fn count(&mut self, values: usize) -> Result<(), Stop> {
        self.values = self.values.saturating_add(values);
        if self.values > self.limits.max_expanded {
            return Err(Stop::Exceeded {
                recursed: self.recursed,
                deep: false,
            });
        }
        Ok(())
    }

    fn run(mut self, root: &'a Value) -> Result<Expanded, Stop> {
        let mut out = Value::Null;
        let mut stack = vec![Item {
            src: root,
            path: Vec::new(),
            level: 0,
            way: push(&None, Step::Ref(Rc::from(""))),
        }];
        while let Some(item) = stack.pop() {
            self.count(1)?;
            if item.level > self.limits.max_levels {
                return Err(Stop::Exceeded {
                    recursed: self.recursed,
                    deep: true,
                });
            }
            let written = self.write(item, &mut stack)?;
            if let Some((path, value)) = written {
                if path.is_empty() {
                    out = value;
                } else if let Some(place) = slot(&mut out, &path) {
                    *place = value;
                }
            }
        }
        if let (Value::Object(out), Some(draft)) = (&mut out, root.get("$schema")) {
            out.insert("$schema".into(), draft.clone());
        }
        Ok(Expanded {
            schema: out,
            cut: self.cut,
        })
    }

    /// Writes one subschema: its value for `item.path` (with placeholders where its own
    /// subschemas go, which are pushed onto `stack`), or nothing when it is replaced by the
    /// target of its `$ref` (pushed in its place).
    fn write(
        &mut self,
        item: Item<'a>,
        stack: &mut Vec<Item<'a>>,
    ) -> Result<Option<(Vec<Seg>, Value)>, Stop> {
        let map = match item.src {
            Value::Object(map) => map,
            other => return Ok(Some((item.path, other.clone()))),
        };
        let mut target = None;
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            let (pointer, value) = self.targets.resolve(reference)?;
            let in_place = way(&item.way).take_while(|link| matches!(link.step, Step::Ref(_)));
            if in_place
                .into_iter()
                .any(|link| matches!(&link.step, Step::Ref(p) if *p == pointer))
            {
                return Err(SchemaRefused::Loop(cut(reference)).into());
            }
            let times = way(&item.way)
                .filter(|link| matches!(&link.step, Step::Ref(p) if *p == pointer))
                .count();
            if times > self.recursion {
                self.cut = true;
                return Ok(Some((item.path, Value::Bool(true))));
            }
            if times > 0 {
                self.recursed = true;
            }
            let way = push(&item.way, Step::Ref(pointer));
            let siblings = map.iter().any(|(name, value)| {
                !matches!(
                    keyword(name, value),
                    Holds::Annotation | Holds::Map(Applies::Never)
                )
            });
            if self.targets.legacy || !siblings {
                // The target takes the reference's place (draft 7 and earlier ignore siblings).
                stack.push(Item {
                    src: value,
                    path: item.path,
                    level: item.level,
                    way,
                });
                return Ok(None);
            }
            target = Some((value, way));
        }
        let mut out = Map::new();
        for (name, value) in map {
            let holds = keyword(name, value);
            let applies = match holds {
                Holds::Annotation | Holds::Map(Applies::Never) => continue,
                Holds::Data => {
                    self.count(size(value))?;
                    out.insert(name.clone(), value.clone());
                    continue;
                }
                Holds::One(applies) | Holds::List(applies) | Holds::Map(applies) => applies,
            };
            let child_way = if applies == Applies::Below {
                push(&item.way, Step::Below)
            } else {
                item.way.clone()
            };
            let mut at = item.path.clone();
            at.push(Seg::Key(name.clone()));
            let placeholder = match (holds, value) {
                (Holds::One(_), _) => {
                    stack.push(self.child(value, at, &item, &child_way));
                    Value::Null
                }
                (Holds::List(_), Value::Array(items)) => {
                    for (i, sub) in items.iter().enumerate() {
                        let mut at = at.clone();
                        at.push(Seg::Index(i));
                        stack.push(self.child(sub, at, &item, &child_way));
                    }
                    Value::Array(vec![Value::Null; items.len()])
                }
                (Holds::Map(_), Value::Object(entries)) => {
                    let mut placeholders = Map::new();
                    for (key, sub) in entries {
                        if sub.is_object() || sub.is_boolean() {
                            let mut at = at.clone();
                            at.push(Seg::Key(key.clone()));
                            stack.push(self.child(sub, at, &item, &child_way));
                            placeholders.insert(key.clone(), Value::Null);
                        } else {
                            // `dependencies` may list property names.
                            self.count(size(sub))?;
                            placeholders.insert(key.clone(), sub.clone());
                        }
                    }
                    Value::Object(placeholders)
                }
                _ => continue,
            };
            out.insert(name.clone(), placeholder);
        }
        if let Some((value, way)) = target {
            // A reference beside other keywords: both apply, as one more `allOf` entry.
            let all_of = out
                .entry("allOf")
                .or_insert_with(|| Value::Array(Vec::new()));
            if let Value::Array(entries) = all_of {
                let mut at = item.path.clone();
                at.push(Seg::Key("allOf".into()));
                at.push(Seg::Index(entries.len()));
                entries.push(Value::Null);
                stack.push(Item {
                    src: value,
                    path: at,
                    level: item.level + 1,
                    way,
                });
            }
        }
        Ok(Some((item.path, Value::Object(out))))
    }

    fn child(
        &self,
        src: &'a Value,
        path: Vec<Seg>,
        parent: &Item<'a>,
        way: &Option<Rc<Link>>,
    ) -> Item<'a> {
        Item {
            src,
            path,
            level: parent.level + 1,
            way: way.clone(),
        }
    }
}

/// The value at `path` in `root` (a placeholder its parent wrote), without recursion.
fn slot<'v>(root: &'v mut Value, path: &[Seg]) -> Option<&'v mut Value> {
    let mut at = root;
    for seg in path {
        at = match (seg, at) {
            (Seg::Key(key), Value::Object(map)) => map.get_mut(key)?,
            (Seg::Index(i), Value::Array(items)) => items.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(at)
}
