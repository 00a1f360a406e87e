; mfma_count.s in the tap-row form (cmake/asm_checks.cmake, rule mfma-count: a kernel without a K
; loop, tap_row_fragment_conv_kernel, has exactly P MFMAs outside loops): the 128x128x128 w2x2 e4m3
; tile on gfx950's 32x32x64 f8f6f4 atom wants 2 x 2 atoms x 2 atom steps = 8; this one lost one of
; them (reported at the kernel). The line after each `; PLANTED <rule>...` comment is where the
; checker must report those rules, and nothing else may be reported.
	.amdgcn_target "amdgcn-amd-amdhsa--gfx950"
	.amdhsa_code_object_version 6
	.text
	.globl	_ZN7vaeconv6kernel28tap_row_fragment_conv_kernelINS0_10HaloPolicyINS0_10TilePolicyINS0_18OneBufferTileShapeILi128ELi128ELi128ELi2ELi2ELi2ELi1EEENS_4arch4CdnaENS7_7AtomFp8ELb0EEENS0_10TapRowHaloILi16ELi1EEEEEEEvNS0_10ConvParamsE
	.p2align	8
	.type	_ZN7vaeconv6kernel28tap_row_fragment_conv_kernelINS0_10HaloPolicyINS0_10TilePolicyINS0_18OneBufferTileShapeILi128ELi128ELi128ELi2ELi2ELi2ELi1EEENS_4arch4CdnaENS7_7AtomFp8ELb0EEENS0_10TapRowHaloILi16ELi1EEEEEEEvNS0_10ConvParamsE,@function
; PLANTED mfma-count
_ZN7vaeconv6kernel28tap_row_fragment_conv_kernelINS0_10HaloPolicyINS0_10TilePolicyINS0_18OneBufferTileShapeILi128ELi128ELi128ELi2ELi2ELi2ELi1EEENS_4arch4CdnaENS7_7AtomFp8ELb0EEENS0_10TapRowHaloILi16ELi1EEEEEEEvNS0_10ConvParamsE: ; @_ZN7vaeconv6kernel28tap_row_fragment_conv_kernelINS0_10HaloPolicyINS0_10TilePolicyINS0_18OneBufferTileShapeILi128ELi128ELi128ELi2ELi2ELi2ELi1EEENS_4arch4CdnaENS7_7AtomFp8ELb0EEENS0_10TapRowHaloILi16ELi1EEEEEEEvNS0_10ConvParamsE
; %bb.0:
	v_lshlrev_b32_e32 v1, 4, v0
	v_mov_b32_e32 v2, 0
	v_mov_b32_e32 v3, 0
	v_mov_b32_e32 v4, 0
	v_mov_b32_e32 v5, 0
	ds_write_b128 v1, v[2:5]
	s_waitcnt lgkmcnt(0)
	s_barrier
	ds_read_b128 v[20:23], v1
	ds_read_b128 v[24:27], v1 offset:16
	ds_read_b128 v[28:31], v1 offset:8192
	ds_read_b128 v[32:35], v1 offset:8208
	s_waitcnt lgkmcnt(0)
	v_mfma_f32_32x32x64_f8f6f4 v[36:51], v[20:27], v[28:35], 0
	v_mfma_f32_32x32x64_f8f6f4 v[52:67], v[20:27], v[28:35], 0
	v_mfma_f32_32x32x64_f8f6f4 v[68:83], v[20:27], v[28:35], 0
	v_mfma_f32_32x32x64_f8f6f4 v[84:99], v[20:27], v[28:35], 0
	v_mfma_f32_32x32x64_f8f6f4 v[36:51], v[20:27], v[28:35], v[36:51]
	v_mfma_f32_32x32x64_f8f6f4 v[52:67], v[20:27], v[28:35], v[52:67]
	v_mfma_f32_32x32x64_f8f6f4 v[68:83], v[20:27], v[28:35], v[68:83]
	s_barrier
	v_lshlrev_b32_e32 v14, 4, v0
	v_mov_b32_e32 v15, 0
	global_store_dwordx4 v[14:15], v[36:39], off
	s_endpgm
	.section	.rodata,"a",@progbits
	.p2align	6, 0x0
	.amdhsa_kernel _ZN7vaeconv6kernel28tap_row_fragment_conv_kernelINS0_10HaloPolicyINS0_10TilePolicyINS0_18OneBufferTileShapeILi128ELi128ELi128ELi2ELi2ELi2ELi1EEENS_4arch4CdnaENS7_7AtomFp8ELb0EEENS0_10TapRowHaloILi16ELi1EEEEEEEvNS0_10ConvParamsE
		.amdhsa_group_segment_fixed_size 21504
		.amdhsa_private_segment_fixed_size 0
		.amdhsa_float_round_mode_32 0
		.amdhsa_float_denorm_mode_32 3
		.amdhsa_float_denorm_mode_16_64 3
	.end_amdhsa_kernel
	.text
.Lfunc_end0:
	.size	_ZN7vaeconv6kernel28tap_row_fragment_conv_kernelINS0_10HaloPolicyINS0_10TilePolicyINS0_18OneBufferTileShapeILi128ELi128ELi128ELi2ELi2ELi2ELi1EEENS_4arch4CdnaENS7_7AtomFp8ELb0EEENS0_10TapRowHaloILi16ELi1EEEEEEEvNS0_10ConvParamsE, .Lfunc_end0-_ZN7vaeconv6kernel28tap_row_fragment_conv_kernelINS0_10HaloPolicyINS0_10TilePolicyINS0_18OneBufferTileShapeILi128ELi128ELi128ELi2ELi2ELi2ELi1EEENS_4arch4CdnaENS7_7AtomFp8ELb0EEENS0_10TapRowHaloILi16ELi1EEEEEEEvNS0_10ConvParamsE
                                        ; -- End function
	.section	.AMDGPU.csdata,"",@progbits
; Kernel info:
; TotalNumSgprs: 26
; NumVgprs: 100
; NumAgprs: 0
; ScratchSize: 0
; LDSByteSize: 21504 bytes/workgroup (compile time only)
; Occupancy: 4
