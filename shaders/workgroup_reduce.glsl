// Workgroup-wide sum and max for one-workgroup-per-row kernels: a subgroup reduction, then one
// shared slot per subgroup. Include after declaring the specialization constant WG (workgroup
// size); call from uniform control flow (the functions contain barriers). The result is the
// same in every invocation, and the order of additions is fixed, so runs are reproducible.
#extension GL_KHR_shader_subgroup_arithmetic : require

shared float reducePartials[WG]; // WG slots: enough even for a subgroup size of 1

float workgroupSum(float value) {
    value = subgroupAdd(value);
    if (subgroupElect()) reducePartials[gl_SubgroupID] = value;
    barrier();
    float total = 0.0;
    for (uint i = 0; i < gl_NumSubgroups; ++i) total += reducePartials[i];
    barrier(); // the slots are reused by the next call
    return total;
}

float workgroupMax(float value) {
    value = subgroupMax(value);
    if (subgroupElect()) reducePartials[gl_SubgroupID] = value;
    barrier();
    float result = reducePartials[0];
    for (uint i = 1; i < gl_NumSubgroups; ++i) result = max(result, reducePartials[i]);
    barrier();
    return result;
}
