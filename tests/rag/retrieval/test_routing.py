"""Document-aware routing: splitting a question from the document it names, and finding that document."""

import pytest

from rag.retrieval import routing
from rag.retrieval.filters import SearchFilters
from rag.retrieval.routing import route, split_reference
from rag.selectors import index_version_get


@pytest.mark.parametrize(
    ("query", "reference", "question"),
    [
        (
            "In the services agreement between ACME and Globex, what is the notice period?",
            "the services agreement between ACME and Globex",
            "what is the notice period?",
        ),
        (
            "What is the notice period in the services agreement between ACME and Globex?",
            "the services agreement between ACME and Globex",
            "What is the notice period?",
        ),
        (
            "Consider the Amendment No. 3 to Wireless Content License Agreement between Fox Mobile "
            "Entertainment, Inc. and Glu Mobile Inc.; What is the expiration date of this contract?",
            "the Amendment No. 3 to Wireless Content License Agreement between Fox Mobile Entertainment, "
            "Inc. and Glu Mobile Inc.",
            "What is the expiration date of this contract?",
        ),
        ("Under the lease, who pays the property taxes?", "the lease", "who pays the property taxes?"),
        ("In Smith v. Jones, what did the court hold?", "Smith v. Jones", "what did the court hold?"),
    ],
)
def test_split_reference_finds_leading_and_trailing_references(query, reference, question):
    split = split_reference(query)
    assert (split.reference, split.question) == (reference, question)
    assert split.explicit


@pytest.mark.parametrize(
    "query",
    [
        "What is the governing law?",
        "In general, what remedies exist for breach?",  # "in" leads, but names no document
        "Is there a non-compete clause?",
        "",
    ],
)
def test_split_reference_leaves_questions_without_a_document_alone(query):
    split = split_reference(query)
    assert split.reference == ""
    assert split.question == " ".join(query.split())
    assert not split.explicit


def test_tokens_split_file_names_and_drop_stopwords():
    assert routing.tokens("GluMobileInc_20070319_Content License Agreement4.txt") == [
        "glu",
        "mobile",
        "inc",
        "20070319",
        "content",
        "license",
        "agreement4",
        "txt",
    ]
    assert routing.tokens("the lease between A and B") == ["lease", "b"]


@pytest.mark.parametrize(
    ("question", "generic"),
    [
        ("What law governs the terpene supply agreement?", "What law governs the agreement?"),
        ("When does the Good Sam endorsement deal end?", "When does the agreement end?"),
        ("Can its licence agreement be assigned?", "Can the agreement be assigned?"),
        # A bare kind of deal is the document after "of", "under", "in" ..., the grant elsewhere
        ("What may the licensee do under the license?", "What may the licensee do under the agreement?"),
        (
            "What must Holiday RV do once the endorsement is pulled?",
            "What must Holiday RV do once the endorsement is pulled?",
        ),
        ("Are the subsidiaries covered by the license?", "Are the subsidiaries covered by the license?"),
        # What is asked about stays; only the document's own name goes.
        ("What is the term of the franchise?", "What is the term of the agreement?"),
        ("Is the governing law of this contract Texas?", "Is the governing law of the agreement Texas?"),
        ("What is the license fee?", "What is the license fee?"),
        # Deals named by their kind without "agreement": "the Ginares cooperation"
        ("How long does the Ginares cooperation run?", "How long does the agreement run?"),
        ("Which law governs the joint venture agreement?", "Which law governs the agreement?"),
        ("Can the Glumetza co-promotion be renewed?", "Can the agreement be renewed?"),
        ("What cooperation is required of the licensee?", "What cooperation is required of the licensee?"),
        # In the plural, the licenses a clause grants, not the document
        (
            "Can the trademark and promotional-materials licenses be sublicensed?",
            "Can the trademark and promotional-materials licenses be sublicensed?",
        ),
        # A possessive names the document too, with the party's name; a question's opening word
        # is not part of that name.
        (
            "How can Dr. Green's affiliate agreement with Union Dental be terminated?",
            "How can the agreement with Union Dental be terminated?",
        ),
        (
            "Under Union Dental's business affiliate agreement, can we inspect his records?",
            "Under the agreement, can we inspect his records?",
        ),
        (
            "What option grants does Crockett's agreement provide for?",
            "What option grants does the agreement provide for?",
        ),
        ("How is Vinton's franchise fee calculated?", "How is Vinton's franchise fee calculated?"),
        # An amendment calls itself "this Amendment", and the model reads the two words apart.
        ("When does the Veoneer/Nissin amendment take effect?", "When does the amendment take effect?"),
        ("Can the amendments be assigned?", "Can the amendment be assigned?"),
    ],
)
def test_generic_reference_replaces_the_phrase_naming_the_document_only(question, generic):
    assert routing.generic_reference(question) == generic


ACME = (
    "MASTER SERVICES AGREEMENT\n\nThis Master Services Agreement is made between Acme Robotics Corp "
    "and Globex Logistics Inc. Either party may terminate this Agreement on ninety days written notice."
)
INITECH = (
    "COMMERCIAL LEASE\n\nThis Lease is made between Initech Holdings LLC, as landlord, and Umbrella "
    "Pharmaceuticals Inc., as tenant. Either party may terminate this Lease on thirty days notice."
)
HOOLI = (
    "SOFTWARE LICENSE AGREEMENT\n\nThis License Agreement is made between Hooli Inc. and Pied Piper "
    "Inc. The licence may be terminated on sixty days notice."
)


@pytest.fixture
def three_documents(case, ingest_text):
    return {
        "acme": ingest_text(case, ACME, filename="acme-globex-msa.txt"),
        "initech": ingest_text(case, INITECH, filename="initech-umbrella-lease.txt"),
        "hooli": ingest_text(case, HOOLI, filename="hooli-pied-piper-license.txt"),
    }


def _route(tenant, query, **kwargs):
    return route(tenant=tenant, query=query, index_version=index_version_get(tenant=tenant), **kwargs)


@pytest.mark.django_db
def test_route_finds_the_document_a_question_names(tenant, three_documents):
    result = _route(tenant, "In the lease between Initech and Umbrella, how much notice ends it?")
    assert result.documents[0].document_id == three_documents["initech"].pk
    assert result.question == "how much notice ends it?"
    assert 0 < result.documents[0].score <= 1
    assert result.match(three_documents["initech"].pk) == result.documents[0].score
    assert result.match(three_documents["hooli"].pk) == 0.0
    metadata = result.as_metadata()
    assert metadata["documents"][0]["doc_id"] == three_documents["initech"].pk
    assert metadata["reference"] == "the lease between Initech and Umbrella"


@pytest.mark.django_db
def test_route_by_party_named_without_reference_phrase_needs_a_clear_match(tenant, three_documents):
    named = _route(tenant, "What notice period applies to Hooli and Pied Piper?")
    assert [d.document_id for d in named.documents] == [three_documents["hooli"].pk]
    generic = _route(tenant, "What notice period applies?")
    assert generic.documents == ()


@pytest.mark.django_db
def test_a_year_in_the_question_does_not_keep_the_named_document_from_routing(tenant, case, ingest_text):
    # Another document's opening holds the year: scored with it, neither match is clear enough.
    ingest_text(
        case,
        "SUPPLY AGREEMENT\n\nThis Supply Agreement dated March 2011 is made between Vandelay "
        "Industries and Kramerica LLC.",
        filename="vandelay-kramerica-supply.txt",
    )
    promotion = ingest_text(
        case,
        "PROMOTION AGREEMENT\n\nThis Promotion Agreement is made between Depomed Inc. and King "
        "Pharmaceuticals Inc. for the promotion of Glumetza. "
        + "The parties agree to cooperate in good faith on the promotion of the product. "
        * 4,
        filename="promotion.txt",
    )
    result = _route(tenant, "Can the Glumetza promotion agreement be renewed after 2011?")
    assert [d.document_id for d in result.documents] == [promotion.pk]
    assert result.content_question == "Can the promotion agreement be renewed after 2011?"


@pytest.mark.django_db
def test_a_party_named_outside_the_reference_tells_two_documents_of_its_kind_apart(
    tenant, case, three_documents, ingest_text
):
    ingest_text(
        case,
        "RETAIL LEASE\n\nThis Lease is made between Wayne Properties LLC, as landlord, and Stark "
        "Outfitters Inc., as tenant. The tenant may not sublet the premises.",
        filename="wayne-stark-lease.txt",
    )
    result = _route(tenant, "Can Umbrella sublet the premises under the lease?")
    assert result.reference == "the lease"
    assert [d.document_id for d in result.documents] == [three_documents["initech"].pk]
    assert "umbrella" in result.naming


@pytest.mark.django_db
def test_route_respects_filters(tenant, three_documents):
    only_others = SearchFilters(document_ids=(three_documents["acme"].pk, three_documents["hooli"].pk))
    result = _route(
        tenant, "In the lease between Initech and Umbrella, who is the landlord?", filters=only_others
    )
    assert three_documents["initech"].pk not in [d.document_id for d in result.documents]


@pytest.mark.django_db
def test_route_never_sees_another_tenants_documents(
    tenant, other_tenant, three_documents, other_case, ingest_text
):
    foreign = ingest_text(
        other_case, "LEASE between Wayne Enterprises and Stark Industries.", filename="wayne.txt"
    )
    result = _route(tenant, "In the lease between Wayne Enterprises and Stark Industries, who pays rent?")
    assert foreign.pk not in [d.document_id for d in result.documents]
    theirs = _route(other_tenant, "In the lease between Initech and Umbrella, who pays rent?")
    assert all(d.document_id == foreign.pk for d in theirs.documents)


@pytest.mark.django_db
def test_route_profiles_follow_the_index_version(tenant, case, three_documents, ingest_text):
    before = _route(tenant, "In the charter between Cyberdyne Systems and Tyrell Corp, what is the term?")
    assert before.documents == ()
    added = ingest_text(case, "CHARTER between Cyberdyne Systems and Tyrell Corp.", filename="charter.txt")
    after = _route(tenant, "In the charter between Cyberdyne Systems and Tyrell Corp, what is the term?")
    assert after.documents[0].document_id == added.pk


@pytest.mark.parametrize(
    ("question", "naming", "generic"),
    [
        # The deal is named by a party: "the Excite sponsorship" is the document, not a grant.
        ("How long does the Excite sponsorship last?", ("excite",), "How long does the agreement last?"),
        (
            "Does the Union Dental business affiliate agreement have a fixed end date?",
            ("union", "dental"),
            "Does the agreement have a fixed end date?",
        ),
        # Named by its party, then about the grant: "the endorsement" stays.
        (
            "What must Holiday RV do once the endorsement is pulled?",
            ("holiday", "rv"),
            "What must do once the endorsement is pulled?",
        ),
    ],
)
def test_the_generic_question_reads_the_reference_with_its_naming_words(question, naming, generic):
    assert routing.Routing(reference="", question=question, naming=naming).generic_question == generic
