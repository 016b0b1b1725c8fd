"""Every text a model stores is either scanned for credentials where it enters or safe by construction
(issue 37, item 2). A new CharField, TextField or JSONField (or an array or generated column of text) in
memories, coderefs, projectdocs or consolidation fails this test until it is classified below, with the
place it is scanned or the reason it cannot hold a credential."""

import pytest
from django.apps import apps
from django.contrib.postgres.fields import ArrayField
from django.db import models

from access.caller import Caller
from access.keys import api_key_create
from kenfold_common.errors import SecretDetected
from memories.services.remember import memory_remember
from oauth.services import check_grant_agent

APPS = ("access", "memories", "coderefs", "projectdocs", "consolidation", "evals")

# Where each text is scanned on the way in (archive import scans every text field of its records:
# archive.records._TEXT_FIELDS, and memories.services everything an agent's call stores).
SCANNED = {
    "memories.Memory.scope": "the project, as typed and normalized: kenfold_common.identity.normalize_project",
    "memories.Memory.content": "memories.services (content, summary), projectdocs.services (sections), "
    "extraction and consolidation (their proposals)",
    "memories.Memory.attrs": "next_steps in handoff_create; docs fields in projectdocs.services._reject_secrets; "
    "extraction evidence in memories.capture.extraction._rejection; forget and review reasons redacted; the "
    "rest is written by Kenfold (ids, kinds, timestamps, model names)",
    "memories.Memory.source_agent": "agent names: access.keys.api_key_create, oauth check_grant_agent",
    "memories.Memory.source_session": "memories.services.writes.reject_secret_session_id",
    "memories.Memory.evidence_uri": "written only by archive import, which scans it",
    "memories.MemoryEdge.source_agent": "agent names: access.keys.api_key_create, oauth check_grant_agent",
    "memories.MemoryEdge.relation": "fixed words, or relates_to:<relation> scanned by projectdocs.services",
    "access.ApiKey.agent": "access.keys.api_key_create",
    "access.ApiKey.label": "access.keys.api_key_create",
    "access.ApiKey.projects": "each normalized and scanned by normalize_project (access.reach.project_limit)",
    "memories.Extraction.error": "redacted in memories.capture.extraction._fail",
    "memories.ContextSnapshot.scope": "a scope from normalize_project",
    "memories.MemoryEvent.agent": "agent names as on memories (api_key_create, check_grant_agent) or Kenfold's "
    "own actors (kenfold-cli, the dashboard's, the extractor)",
    "memories.MemoryEvent.detail": "ids, types and statuses Kenfold wrote; a doc's path, scanned by "
    "projectdocs.services._reject_secrets; forget and review reasons redacted (memories.services.review._clean_reason)",
    "memories.ServedCall.agent": "the caller's agent name, scanned where the credential was made",
    "memories.ServedCall.session_id": "a session id holding a credential is not kept (memories.usage._kept_session)",
    "evals.GoldenQuestion.query": "evals.services.question_add (reject_secrets)",
    "evals.EvalResult.query": "the golden question's query, scanned when it was added",
    "coderefs.CodeRef.scope": "the memory's scope",
    "coderefs.CodeRef.path": "cut from scanned content and scanned again alone: coderefs.services.refs_record",
    "coderefs.CodeRef.symbol": "cut from scanned content and scanned again alone: coderefs.services.refs_record",
    "coderefs.CodeRef.resolved_path": "coderefs.services._validate_result",
    "coderefs.CodeRef.anchor_hash": "the reported hash: coderefs.services._validate_result",
    "consolidation.Consolidation.scope": "the members' scope",
    "consolidation.Consolidation.content": "consolidation.prompts.digest_problem refuses a digest with a credential",
    "consolidation.Consolidation.reason": "consolidation.prompts.clean_reason blanks a reason with a credential",
    "consolidation.Consolidation.decision_note": "redacted in consolidation.services.proposal_reject",
}

SAFE = {
    "memories.Memory.type": "one of MemoryType",
    "memories.Memory.trust": "one of Trust",
    "memories.Memory.status": "one of Status",
    "memories.Memory.code_state": "one of CodeState",
    "memories.Memory.content_key": "generated from content, which is scanned",
    "access.ApiKey.prefix": "the start of a key Kenfold made, too short to authenticate (shown in listings)",
    "access.Owner.password_hash": "an Argon2id hash Kenfold made of the owner password (access.password)",
    "memories.MemoryEmbedding.model": "the embedding model's name from settings",
    "memories.MemoryEmbedding.content_md5": "a hash",
    "memories.Extraction.status": "one of ExtractionStatus",
    "memories.Extraction.model": "the chat model's name from settings",
    "memories.Extraction.refused": "counts keyed by Kenfold's own refusal kinds, never the model's words",
    "memories.ContextSnapshot.held": "memory ids and versions Kenfold wrote",
    "memories.MemoryEvent.action": "one of MemoryAction",
    "memories.MemoryEvent.credential": "key:<api key id> or grant:<grant id>, ids Kenfold made (Caller.credential)",
    "memories.CredentialQuota.credential": "key:<api key id> or grant:<grant id> of an existing credential",
    "memories.QuotaCounter.credential": "key:<api key id> or grant:<grant id>, ids Kenfold made (Caller.credential)",
    "memories.QuotaCounter.kind": "writes or memories",
    "memories.ServedCall.tool": "recall or get_context (a database check)",
    "memories.ServedCall.credential": "key:<api key id> or grant:<grant id>, ids Kenfold made (Caller.credential)",
    "evals.GoldenQuestion.scope": "a scope from normalize_project (evals.selectors.owner_scope)",
    "evals.GoldenQuestion.created_by": "a fixed actor name (kenfold-cli, the dashboard's)",
    "evals.EvalRun.scope": "a golden question's scope",
    "evals.EvalRun.trigger": "one of Trigger",
    "evals.EvalRun.models": "the embedding models' names from settings",
    "coderefs.CodeRef.state": "one of RefState",
    "coderefs.CodeRef.anchor_commit": "a commit id, 7-64 hex digits (is_commit)",
    "coderefs.CodeRef.checked_commit": "a commit id, 7-64 hex digits (is_commit)",
    "consolidation.Consolidation.kind": "one of Kind",
    "consolidation.Consolidation.status": "one of ProposalStatus",
    "consolidation.Consolidation.model": "the chat model's name from settings",
    "consolidation.Consolidation.refused": "one of Kenfold's own refusal kinds, never the model's words",
    "consolidation.Consolidation.decided_by": "a fixed actor name (kenfold-cli, the dashboard's)",
    "consolidation.ConsolidationScan.model": "the chat model's name from settings",
}

_TEXT_FIELDS = (models.CharField, models.TextField, models.JSONField)


def _holds_text(field: models.Field) -> bool:
    if isinstance(field, ArrayField):
        return _holds_text(field.base_field)
    if isinstance(field, models.GeneratedField):
        return isinstance(field.output_field, _TEXT_FIELDS)
    return isinstance(field, _TEXT_FIELDS)


def _stored_text_fields() -> set[str]:
    return {
        f"{model._meta.label}.{field.name}"
        for app in APPS
        for model in apps.get_app_config(app).get_models()
        for field in model._meta.get_fields()
        if isinstance(field, models.Field) and _holds_text(field)
    }


def test_every_stored_text_field_is_scanned_or_safe() -> None:
    fields = _stored_text_fields()
    unclassified = sorted(fields - SCANNED.keys() - SAFE.keys())
    assert not unclassified, (
        f"{unclassified}: scan these where they enter (kenfold_common.secrets.reject_secrets) and list them "
        "in SCANNED, or list them in SAFE with the reason they cannot hold a credential"
    )
    assert not SCANNED.keys() & SAFE.keys(), "a field is either scanned or safe"
    assert not (SCANNED.keys() | SAFE.keys()) - fields, "remove the entries of fields that are gone"
    assert all(SCANNED.values()) and all(SAFE.values()), "every entry says where or why"


SLACK_TOKEN = "xoxb-" + "2381234567-1234567890123-abcdefghijklmnopqrstuvwx"


@pytest.mark.django_db
def test_an_agent_name_holding_a_credential_is_refused() -> None:
    # Lowercase tokens fit the agent name rule; the name is then on every memory the agent writes.
    with pytest.raises(SecretDetected) as refused:
        api_key_create(agent=SLACK_TOKEN)
    assert str(refused.value).startswith("the agent name appears to contain a Slack token.")
    with pytest.raises(SecretDetected) as refused:
        check_grant_agent(agent=SLACK_TOKEN)
    assert str(refused.value).startswith("The agent name appears to contain a Slack token.")
    with pytest.raises(SecretDetected) as refused:
        api_key_create(agent="ci", label=f"bot {SLACK_TOKEN}")
    assert str(refused.value).startswith("the label appears to contain a Slack token.")
    assert SLACK_TOKEN[5:15] not in str(refused.value)


@pytest.mark.django_db
def test_a_project_is_scanned_as_typed_before_it_is_lowercased() -> None:
    aws_key = "AKIA" + "Z7Q4M2X9RT3LW5KP"
    with pytest.raises(SecretDetected) as refused:
        memory_remember(
            caller=Caller(agent="codex"), content="Builds run nightly.", project=f"acme/{aws_key}"
        )
    assert str(refused.value).startswith("project appears to contain an AWS access key.")
