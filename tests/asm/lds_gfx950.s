; gfx950_pass.s with one planted violation (cmake/asm_checks.cmake; README.md): 160 KiB + 1280 bytes
; of LDS, over gfx950's 160 KiB. The line after each `; PLANTED <rule>...` comment is where the
; checker must report those rules, and nothing else may be reported.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
	.amdhsa_code_object_version 6
	.text
	.globl	_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi64ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_7AtomFp8ELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
	.p2align	8
	.type	_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi64ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_7AtomFp8ELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE,@function
_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi64ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_7AtomFp8ELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE: ; @_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi64ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_7AtomFp8ELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
; %bb.0:
	s_load_dwordx2 s[8:9], s[0:1], 0x0
	s_load_dword s10, s[0:1], 0x8
	s_load_dword s2, s[0:1], 0x18
	v_lshlrev_b32_e32 v1, 4, v0
	v_and_b32_e32 v2, 0x3f0, v1
	v_or_b32_e32 v3, 0x4000, v2
	s_mov_b32 s11, 0x20000
	s_waitcnt lgkmcnt(0)
	s_and_b32 s9, s9, 0xffff
	buffer_load_dwordx4 v[60:63], v1, s[8:11], 0 offen
	s_mov_b32 s3, 0
.LBB0_1:                                ; =>This Loop Header: Depth=1
	s_waitcnt vmcnt(0)
	ds_write_b128 v1, v[60:63]
	v_add_u32_e32 v1, 64, v1
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v[60:63], v1, s[8:11], 0 offen
	ds_read_b128 v[64:67], v2
	ds_read_b128 v[68:71], v2 offset:16
	ds_read_b128 v[72:75], v3
	ds_read_b128 v[76:79], v3 offset:16
	ds_read_b128 v[80:83], v3 offset:2048
	ds_read_b128 v[84:87], v3 offset:2064
	ds_read_b128 v[88:91], v3 offset:4096
	ds_read_b128 v[92:95], v3 offset:4112
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_32x32x64_f8f6f4 v[4:19], v[64:71], v[72:79], v[4:19]
	v_mfma_f32_32x32x64_f8f6f4 v[20:35], v[64:71], v[80:87], v[20:35]
	v_mfma_f32_32x32x64_f8f6f4 v[36:51], v[64:71], v[88:95], v[36:51]
	s_waitcnt vmcnt(0)
	ds_write_b128 v1, v[60:63] offset:49152
	v_add_u32_e32 v1, 64, v1
	s_waitcnt lgkmcnt(0)
	s_barrier
	buffer_load_dwordx4 v[60:63], v1, s[8:11], 0 offen
	ds_read_b128 v[64:67], v2 offset:49152
	ds_read_b128 v[68:71], v2 offset:49168
	ds_read_b128 v[72:75], v3 offset:49152
	ds_read_b128 v[76:79], v3 offset:49168
	ds_read_b128 v[80:83], v3 offset:51200
	ds_read_b128 v[84:87], v3 offset:51216
	ds_read_b128 v[88:91], v3 offset:53248
	ds_read_b128 v[92:95], v3 offset:53264
	s_add_i32 s3, s3, 2
	s_cmp_lt_i32 s3, s2
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_32x32x64_f8f6f4 v[4:19], v[64:71], v[72:79], v[4:19]
	v_mfma_f32_32x32x64_f8f6f4 v[20:35], v[64:71], v[80:87], v[20:35]
	v_mfma_f32_32x32x64_f8f6f4 v[36:51], v[64:71], v[88:95], v[36:51]
	s_cbranch_scc1 .LBB0_1
; %bb.2:
	s_barrier
	ds_write_b128 v2, v[4:7]
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b128 v[60:63], v2
	v_lshl_add_u64 v[52:53], s[8:9], 0, v[0:1]
	s_waitcnt lgkmcnt(0)
	global_store_dwordx4 v[52:53], v[60:63], off
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel _ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi64ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_7AtomFp8ELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
; PLANTED lds-size
		.amdhsa_group_segment_fixed_size 165120
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
	.end_amdhsa_kernel
	.text
.Lfunc_end0:
	.size	_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi64ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_7AtomFp8ELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE, .Lfunc_end0-_ZN7vaeconv6kernel11conv_kernelINS0_10TilePolicyINS0_9TileShapeILi128ELi96ELi64ELi4ELi1ELi2ELi1EEENS_4arch4CdnaENS6_7AtomFp8ELb0EEENS0_8GeometryILi1ELi1ELi1ELi3EEELb1EEEvNS0_10ConvParamsE
                                        ; -- End function
	.section	.AMDGPU.csdata,"",@progbits
; Kernel info:
; TotalNumSgprs: 18
; NumVgprs: 96
; NumAgprs: 0
; ScratchSize: 0
; LDSByteSize: 165120 bytes/workgroup (compile time only)
; Occupancy: 4
