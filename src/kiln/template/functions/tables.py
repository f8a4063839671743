"""Which function names each template version knows (reference section 1.3).

Two tables per version: the ordinary one and the condition-context one. A name
missing from a table is plain data there. Removed functions map to a spec that
fails validation; in condition contexts, ordinary functions map to a spec that
fails at parse time ("invalid in this context").
Imports: kiln.core and the function families beside this module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kiln.template.functions import collections as col
from kiln.template.functions import conditions as cond
from kiln.template.functions import references as ref
from kiln.template.functions import strings as st
from kiln.template.functions import yaql_function as yq
from kiln.template.functions.base import FunctionSpec, FunctionTable

if TYPE_CHECKING:
    from kiln.template.versions import TemplateVersion

# CFN functions HOT 2013-05-23 still carries, and removes from 2014-10-16.
_CFN_IN_HOT_2013 = {
    "Fn::Base64": FunctionSpec.of(st.Base64),
    "Fn::GetAZs": FunctionSpec.of(col.GetAZs),
    "Fn::Join": FunctionSpec.of(st.ListJoin),
    "Fn::MemberListToMap": FunctionSpec.of(col.MemberListToMap),
    "Fn::Replace": FunctionSpec.of(st.FnReplace),
    "Fn::ResourceFacade": FunctionSpec.of(ref.ResourceFacade),
    "Fn::Select": FunctionSpec.of(col.Select),
    "Fn::Split": FunctionSpec.of(st.FnSplit),
    "Ref": FunctionSpec.of(ref.Ref),
}

# (name, first HOT date, spec) for HOT-native functions.
_HOT_FUNCTIONS: tuple[tuple[str, str, FunctionSpec], ...] = (
    ("get_attr", "2013-05-23", FunctionSpec.of(ref.GetAttr)),
    ("get_file", "2013-05-23", FunctionSpec.of(ref.GetFile)),
    ("get_param", "2013-05-23", FunctionSpec.of(ref.GetParam)),
    ("get_resource", "2013-05-23", FunctionSpec.of(ref.GetResource)),
    ("list_join", "2013-05-23", FunctionSpec.of(st.ListJoin)),
    ("resource_facade", "2013-05-23", FunctionSpec.of(ref.ResourceFacade)),
    ("str_replace", "2013-05-23", FunctionSpec.of(st.StrReplace)),
    ("repeat", "2015-04-30", FunctionSpec.of(col.Repeat)),
    ("digest", "2015-04-30", FunctionSpec.of(st.Digest)),
    ("str_split", "2015-10-15", FunctionSpec.of(st.StrSplit)),
    ("map_merge", "2016-04-08", FunctionSpec.of(col.MapMerge)),
    ("if", "2016-10-14", FunctionSpec(cond.build_if)),
    ("yaql", "2016-10-14", FunctionSpec.of(yq.Yaql)),
    ("map_replace", "2016-10-14", FunctionSpec.of(col.MapReplace)),
    ("filter", "2017-02-24", FunctionSpec.of(col.Filter)),
    ("str_replace_strict", "2017-02-24", FunctionSpec.of(st.StrReplaceStrict)),
    ("make_url", "2017-09-01", FunctionSpec.of(st.MakeUrl)),
    ("list_concat", "2017-09-01", FunctionSpec.of(col.ListConcat)),
    ("list_concat_unique", "2017-09-01", FunctionSpec.of(col.ListConcatUnique)),
    ("str_replace_vstrict", "2017-09-01", FunctionSpec.of(st.StrReplaceVStrict)),
    ("contains", "2017-09-01", FunctionSpec.of(col.Contains)),
)

_CFN_FUNCTIONS = {
    **_CFN_IN_HOT_2013,
    "Fn::GetAtt": FunctionSpec.of(ref.FnGetAtt),
    "Fn::FindInMap": FunctionSpec.of(col.FindInMap),
}


def function_table(version: TemplateVersion) -> FunctionTable:
    """The ordinary function table of ``version``."""
    if version.is_cfn:
        table = dict(_CFN_FUNCTIONS)
        if version.has_conditions:
            table["Fn::If"] = FunctionSpec(cond.build_if)
        return table
    table = {name: spec for name, since, spec in _HOT_FUNCTIONS if version.date >= since}
    table.update(_removed_cfn(version))
    return table


def _removed_cfn(version: TemplateVersion) -> dict[str, FunctionSpec]:
    if version.date == "2013-05-23":
        return dict(_CFN_IN_HOT_2013)
    removed = {name: FunctionSpec(ref.build_removed) for name in _CFN_IN_HOT_2013}
    if version.date < "2015-10-15":
        removed["Fn::Select"] = FunctionSpec.of(col.Select)
    return removed


# Condition functions per family: (name, first HOT date) for HOT.
_HOT_CONDITION_FUNCTIONS: tuple[tuple[str, str, FunctionSpec], ...] = (
    ("equals", "2016-10-14", FunctionSpec.of(cond.Equals)),
    ("not", "2016-10-14", FunctionSpec.of(cond.Not)),
    ("and", "2016-10-14", FunctionSpec.of(cond.And)),
    ("or", "2016-10-14", FunctionSpec.of(cond.Or)),
    ("get_param", "2016-10-14", FunctionSpec.of(ref.GetParam)),
    ("contains", "2017-09-01", FunctionSpec.of(col.Contains)),
    ("yaql", "2017-09-01", FunctionSpec.of(yq.Yaql)),
)


def condition_table(version: TemplateVersion) -> FunctionTable:
    """The condition-context table of ``version`` (reference 1.5)."""
    if not version.has_conditions:
        return {}
    ordinary = function_table(version)
    table: dict[str, FunctionSpec] = {}
    # Every function the version knows is invalid here unless listed below;
    # removed functions still fail as removed.
    for name, spec in ordinary.items():
        table[name] = spec if spec.build is ref.build_removed else FunctionSpec(ref.build_invalid)
    if version.is_cfn:
        table.update(
            {
                "Fn::Equals": FunctionSpec.of(cond.Equals),
                "Fn::Not": FunctionSpec.of(cond.FnNot),
                "Fn::And": FunctionSpec.of(cond.And),
                "Fn::Or": FunctionSpec.of(cond.Or),
                "Ref": FunctionSpec.of(ref.ParamRef),
                "Fn::FindInMap": FunctionSpec.of(col.FindInMap),
            }
        )
        return table
    for name, since, spec in _HOT_CONDITION_FUNCTIONS:
        if version.date >= since:
            table[name] = spec
    return table
