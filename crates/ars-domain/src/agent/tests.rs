use super::*;
use crate::{ContextDefaults, Role};

fn user() -> Caller {
    Caller {
        id: UserId::new(),
        role: Role::User,
    }
}

fn admin() -> Caller {
    Caller {
        id: UserId::new(),
        role: Role::Admin,
    }
}

fn input(backend: Option<&str>) -> AgentInput {
    AgentInput {
        slug: "helper".into(),
        name: "Helper".into(),
        backend_id: backend.map(str::to_string),
        ..AgentInput::default()
    }
}

fn stored(draft: AgentDraft, owner: Option<UserId>) -> Agent {
    let now = crate::time::now();
    Agent {
        id: AgentId::new(),
        slug: draft.slug,
        name: draft.name,
        description: draft.description,
        backend_id: draft.backend,
        is_subagent: draft.backend.is_subagent(),
        config_json: draft.config,
        share_config: draft.share_config,
        owner_id: owner,
        is_default: draft.is_default,
        is_builtin: false,
        created_at: now,
        updated_at: now,
    }
}

#[test]
fn is_subagent_is_derived_from_the_backend_when_omitted() {
    let draft = input(Some("SubAgentBackend"))
        .validate(&user(), None)
        .unwrap();
    assert!(draft.is_subagent());
    let draft = input(None).validate(&user(), None).unwrap();
    assert_eq!(draft.backend, Backend::Default);
}

#[test]
fn masquerading_either_way_is_rejected_naming_is_subagent() {
    let mut a = input(Some("DefaultBackend"));
    a.is_subagent = Some(true);
    assert_eq!(
        a.validate(&user(), None).unwrap_err().field(),
        "is_subagent"
    );
    let mut b = input(Some("SubAgentBackend"));
    b.is_subagent = Some(false);
    assert_eq!(
        b.validate(&user(), None).unwrap_err().field(),
        "is_subagent"
    );
}

#[test]
fn unknown_backend_is_rejected() {
    let err = input(Some("FancyBackend"))
        .validate(&user(), None)
        .unwrap_err();
    assert_eq!(err.field(), "backend_id");
}

#[test]
fn a_subagent_can_never_be_default() {
    let mut a = input(Some("SubAgentBackend"));
    a.is_default = Some(true);
    let err = a.validate(&admin(), None).unwrap_err();
    assert!(matches!(err, ValidationError::Invalid(_)));
    assert_eq!(err.field(), "is_default");
}

#[test]
fn turning_the_default_into_a_subagent_needs_an_explicit_clear() {
    let mut a = input(None);
    a.is_default = Some(true);
    let existing = stored(a.validate(&admin(), None).unwrap(), None);
    let mut change = AgentInput::from_agent(&existing);
    change.backend_id = Some("SubAgentBackend".into());
    let err = change
        .clone()
        .validate(&admin(), Some(&existing))
        .unwrap_err();
    assert_eq!(err.field(), "is_default");
    change.is_default = Some(false);
    let draft = change.validate(&admin(), Some(&existing)).unwrap();
    assert!(draft.is_subagent() && !draft.is_default);
}

#[test]
fn a_subagents_allow_list_must_be_empty() {
    let mut a = input(Some("SubAgentBackend"));
    a.config_json.context.subagents = Some(vec!["general-purpose".into()]);
    let err = a.validate(&user(), None).unwrap_err();
    assert_eq!(err.field(), "config_json.context.subagents");
    let mut b = input(Some("SubAgentBackend"));
    b.config_json.context.subagents = Some(vec![]);
    assert_eq!(
        b.validate(&user(), None).unwrap().config.context.subagents,
        None
    );
}

#[test]
fn only_admins_make_an_agent_default() {
    let mut a = input(None);
    a.is_default = Some(true);
    assert!(matches!(
        a.validate(&user(), None).unwrap_err(),
        ValidationError::Forbidden(_)
    ));
}

#[test]
fn slugs_are_checked() {
    for bad in ["", "Upper", "has space", "-lead", "trail-", "ünï"] {
        assert!(validate_slug(bad).is_err(), "{bad:?} should be refused");
    }
    assert!(validate_slug("general-purpose").is_ok());
}

#[test]
fn built_in_rows_keep_slug_backend_and_public_visibility() {
    let mut gp = input(Some("SubAgentBackend"));
    gp.slug = GENERAL_PURPOSE_SLUG.into();
    gp.share_config.visibility = Visibility::Public;
    let mut existing = stored(gp.validate(&admin(), None).unwrap(), None);
    existing.is_builtin = true;
    let mut change = AgentInput::from_agent(&existing);
    change.share_config.visibility = Visibility::Private;
    assert_eq!(
        change
            .validate(&admin(), Some(&existing))
            .unwrap_err()
            .field(),
        "share_config.visibility"
    );
    let mut change = AgentInput::from_agent(&existing);
    change.slug = "renamed".into();
    assert_eq!(
        change
            .validate(&admin(), Some(&existing))
            .unwrap_err()
            .field(),
        "slug"
    );
}

#[test]
fn sharing_rules() {
    let owner = user();
    let manager = user();
    let listed = user();
    let stranger = user();
    let mut a = input(None);
    a.share_config = ShareConfig {
        visibility: Visibility::Private,
        user_ids: vec![listed.id],
        manager_ids: vec![manager.id],
    };
    let mut agent = stored(a.validate(&owner, None).unwrap(), Some(owner.id));
    for (who, view, manage) in [
        (&owner, true, true),
        (&manager, true, true),
        (&listed, false, false),
        (&stranger, false, false),
        (&admin(), true, true),
    ] {
        assert_eq!(who.can_view(&agent), view);
        assert_eq!(who.can_manage(&agent), manage);
    }
    agent.share_config.visibility = Visibility::Users;
    assert!(listed.can_view(&agent) && !stranger.can_view(&agent));
    agent.share_config.visibility = Visibility::Public;
    assert!(stranger.can_view(&agent) && !stranger.can_manage(&agent));
    let _ = ContextDefaults::default();
}

#[test]
fn only_an_admin_can_turn_network_on() {
    let mut wants_network = input(None);
    wants_network.config_json.context.network = Some(true);
    let err = wants_network.clone().validate(&user(), None).unwrap_err();
    assert_eq!(err.field(), "config_json.context.network");
    assert!(matches!(err, ValidationError::Forbidden(_)), "{err:?}");

    // An admin may; the owner may then keep it, or turn it off, but not turn it back on.
    let granted = wants_network.clone().validate(&admin(), None).unwrap();
    let owner = user();
    let agent = stored(granted, Some(owner.id));
    let kept = wants_network
        .clone()
        .validate(&owner, Some(&agent))
        .unwrap();
    assert_eq!(kept.config.context.network, Some(true));
    let mut off = input(None);
    off.config_json.context.network = Some(false);
    let off = stored(off.validate(&owner, Some(&agent)).unwrap(), Some(owner.id));
    assert!(wants_network.validate(&owner, Some(&off)).is_err());
}
