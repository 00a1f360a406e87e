; gfx942_pass.s with one planted violation (cmake/asm_checks.cmake; README.md): the epilogue store
; through a flat address (which may reach LDS). The line after each `; PLANTED <rule>...` comment is
; where the checker must report those rules, and nothing else may be reported.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx942"
	.amdhsa_code_object_version 6
	.text
	.globl	_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi32ELi32ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
	.p2align	8
	.type	_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi32ELi32ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE,@function
_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi32ELi32ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE: ; @_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi32ELi32ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
; %bb.0:
	s_load_dwordx2 s[4:5], s[0:1], 0x0
	s_load_dwordx2 s[16:17], s[0:1], 0x10
	s_load_dword s6, s[0:1], 0x8
	s_load_dword s8, s[0:1], 0x18
	v_lshlrev_b32_e32 v1, 4, v0
	v_and_b32_e32 v11, 0x3f0, v1
	s_mov_b32 s7, 0x20000
	s_waitcnt lgkmcnt(0)
	s_and_b32 s5, s5, 0xffff
	s_and_b32 s17, s17, 0xffff
	s_mov_b32 s18, s6
	s_mov_b32 s19, s7
	buffer_load_dwordx4 v[2:5], v1, s[4:7], 0 offen
	buffer_load_dwordx4 v[6:9], v1, s[16:19], 0 offen
	s_mov_b32 s9, 0
	s_cmp_lt_i32 s8, 1
	s_cbranch_scc1 .LBB0_4
.LBB0_1:                                ; =>This Loop Header: Depth=1
                                        ;     Child Loop BB0_2 Depth 2
	s_waitcnt vmcnt(0)
	ds_write_b128 v1, v[2:5]
	ds_write_b128 v1, v[6:9] offset:8192
	s_add_i32 s9, s9, 1
	v_add_u32_e32 v12, 64, v1
	s_mov_b64 s[10:11], 0
	s_waitcnt lgkmcnt(0)
	s_barrier
.LBB0_2:                                ;   Parent Loop BB0_1 Depth=1
                                        ; =>  This Inner Loop Header: Depth=2
	v_subrev_u32_e32 v12, s8, v12
	v_cmp_gt_i32_e64 s[12:13], s8, v12
	s_or_b64 s[10:11], s[12:13], s[10:11]
	s_andn2_b64 exec, exec, s[10:11]
	s_cbranch_execnz .LBB0_2
; %bb.3:                                ;   in Loop: Header=BB0_1 Depth=1
	s_or_b64 exec, exec, s[10:11]
	buffer_load_dwordx4 v[2:5], v12, s[4:7], 0 offen
	buffer_load_dwordx4 v[6:9], v12, s[16:19], 0 offen
	ds_read_b128 v[20:23], v11
	ds_read_b128 v[24:27], v11 offset:8192
	ds_read_b128 v[28:31], v11 offset:16
	ds_read_b128 v[32:35], v11 offset:8208
	s_cmp_lt_i32 s9, s8
	s_waitcnt lgkmcnt(2)
	v_mfma_f32_32x32x8_bf16 v[36:51], v[20:21], v[24:25], v[36:51]
	v_mfma_f32_32x32x8_bf16 v[36:51], v[22:23], v[26:27], v[36:51]
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_32x32x8_bf16 v[36:51], v[28:29], v[32:33], v[36:51]
	v_mfma_f32_32x32x8_bf16 v[36:51], v[30:31], v[34:35], v[36:51]
	s_cbranch_scc1 .LBB0_1
.LBB0_4:
	v_cmp_gt_u32_e32 vcc, 32, v0
	s_and_saveexec_b64 s[10:11], vcc
	s_cbranch_execz .LBB0_6
; %bb.5:
	ds_write_b32 v11, v36
	ds_write_b32 v11, v37 offset:148
	s_waitcnt lgkmcnt(0)
.LBB0_6:
	s_or_b64 exec, exec, s[10:11]
	s_barrier
	ds_read_b128 v[2:5], v11
	v_lshl_add_u64 v[14:15], s[16:17], 0, v[12:13]
	s_waitcnt lgkmcnt(0)
; PLANTED flat
	flat_store_dwordx4 v[14:15], v[2:5]
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel _ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi32ELi32ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
		.amdhsa_group_segment_fixed_size 20480
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
	.end_amdhsa_kernel
	.text
.Lfunc_end0:
	.size	_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi32ELi32ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE, .Lfunc_end0-_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi32ELi32ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_10AtomBf16OfILi32EEELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
                                        ; -- End function
	.section	.AMDGPU.csdata,"",@progbits
; Kernel info:
; TotalNumSgprs: 26
; NumVgprs: 52
; NumAgprs: 0
; ScratchSize: 0
; LDSByteSize: 20480 bytes/workgroup (compile time only)
; Occupancy: 8
